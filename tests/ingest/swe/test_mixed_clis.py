"""`ingest-all` over one folder mixing the session stores the coding-agent CLIs wrote at test time (Claude Code,
Codex, Gemini CLI and OpenCode, two releases each; Cline's task folders) with the bundled samples: every
session is read by its own format, with the episode counts the scripts fix, and nothing a person would call a
session is left unread."""

import shutil

from tests.conftest import SAMPLES
from tests.ingest.swe import (test_claude_code_cli, test_cline_cli, test_codex_cli, test_gemini_cli_cli,
                              test_opencode_cli)
from tests.ingest.swe.coding_clis import cli_run

STORES = {  # CLI -> (its releases, where under HOME it keeps its sessions (folders), episodes per run)
    "claude-code": (test_claude_code_cli.VERSIONS, ".claude/projects", 2),  # the main line and its subagent
    "codex": (test_codex_cli.VERSIONS, ".codex/sessions", 1),
    "gemini-cli": (test_gemini_cli_cli.VERSIONS, ".gemini/tmp", 1),
    "opencode": (test_opencode_cli.VERSIONS, ".local/share/opencode", 2),  # its data folder: a session, a subagent
    # 2.x task folders, 3.x session files (its SQLite session index in `db/` is the CLI's, not a session)
    "cline": (test_cline_cli.VERSIONS, (".cline/data/tasks", ".cline/data/sessions"), 1),
    "cline-xml": (("2.18.0",), ".cline/data/tasks", 1),  # the XML tool form
}
FORMAT = {"claude-code": "claude_code", "codex": "codex", "gemini-cli": "gemini_cli", "opencode": "opencode",
          "cline": "cline", "cline-xml": "cline"}


def test_ingest_all_reads_every_cli_session_beside_the_samples(run, query, tmp_path, tmp_path_factory):
    mixed = tmp_path / "mixed"
    for folder in ("claude-code", "codex", "swe"):
        shutil.copytree(SAMPLES / folder, mixed / "samples" / folder)
    expected = {}
    for name, (versions, stores, episodes) in STORES.items():
        for version in versions:
            home = cli_run(name, version, tmp_path_factory).home
            # the stores as the CLIs left them, less Gemini CLI's `.project_root` markers and OpenCode's logs
            # (not sessions)
            for folder in (stores,) if isinstance(stores, str) else stores:
                if (home / folder).exists():
                    shutil.copytree(home / folder, mixed / "cli" / f"{name}-{version}" / folder.rsplit("/", 1)[-1],
                                    ignore=shutil.ignore_patterns(".project_root", "log"))
            expected[FORMAT[name]] = expected.get(FORMAT[name], 0) + episodes
    result = run("ingest-all", [mixed])  # ingest, then validate
    assert result.status == "success"
    got = {r["f"]: r["n"] for r in query("SELECT source_format AS f, count(*) AS n FROM episodes "
                                          "WHERE source_uri LIKE '%/cli/%' GROUP BY 1")}
    assert got == expected
    assert query("SELECT stage, rule, reason FROM quarantine WHERE stage <> 'ingest'") == []
    assert query("SELECT rule, reason FROM quarantine WHERE source_uri LIKE '%/cli/%'") == []
    unread = [i.path for i in result.ignored if not i.path.endswith(("PROVENANCE.md", "README.md"))]
    assert unread == []
