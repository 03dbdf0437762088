"""`ingest-all` over one folder mixing the session stores the coding-agent CLIs wrote at test time (Claude Code,
Codex, Gemini CLI, OpenCode and Aider at two releases each, Qwen Code at three, the first in Gemini CLI's
layout, and its `/export json` and `/export jsonl` files; Cline's task folders and session files) and a Roo Code task store (which cannot run here: laid out as its
extension keeps it, `tasks/_index.json` beside `tasks/<id>/`, its files those of `test_roo_code`) with the bundled
samples: every session is read by its own format, with the episode counts the scripts fix, and nothing a person
would call a session is left unread (Roo Code's `_index.json` is its list of tasks, not a session).
Aider keeps its chat history in the workspace (`.aider.chat.history.md`, one episode per chat session); its
prompt history (`.aider.input.history`) and its `--llm-history-file` are not sessions of their own and stay out."""

import json
import shutil

from tests.conftest import SAMPLES
from tests.ingest.swe import (test_aider_cli, test_claude_code_cli, test_cline_cli, test_codex_cli,
                              test_gemini_cli_cli, test_opencode_cli, test_qwen_code_cli, test_roo_code)
from tests.ingest.swe.coding_clis import QWEN_GEMINI_LAYOUT, cli_run, qwen_code_export

AIDER_HISTORY = "WORKSPACE:.aider.chat.history.md"  # kept in the workspace, not under HOME
QWEN_EXPORTS = "WORKSPACE:qwen-code-export"  # `/export json` and `/export jsonl` write into the workspace
STORES = {  # CLI -> (its releases, where under HOME it keeps its sessions (folders), episodes per run, format)
    "claude-code": (test_claude_code_cli.VERSIONS, ".claude/projects", 2, "claude_code"),  # main line, subagent
    "codex": (test_codex_cli.VERSIONS, ".codex/sessions", 1, "codex"),
    "gemini-cli": (test_gemini_cli_cli.VERSIONS, ".gemini/tmp", 1, "gemini_cli"),
    "qwen-code": (test_qwen_code_cli.VERSIONS, ".qwen/projects", 1, "qwen_code"),
    "qwen-code@0.1": ((QWEN_GEMINI_LAYOUT,), ".qwen/tmp", 1, "gemini_cli"),  # Gemini CLI's recorder
    "qwen-code@export": (test_qwen_code_cli.VERSIONS, QWEN_EXPORTS, 2, "qwen_code_export"),  # JSON, JSONL
    "aider": (test_aider_cli.VERSIONS, AIDER_HISTORY, 2, "aider_chat"),  # two chat sessions
    "opencode": (test_opencode_cli.VERSIONS, ".local/share/opencode", 2, "opencode"),  # a session, a subagent
    # 2.x task folders, 3.x session files (its SQLite session index in `db/` is the CLI's, not a session)
    "cline": (test_cline_cli.VERSIONS, (".cline/data/tasks", ".cline/data/sessions"), 1, "cline"),
    "cline-xml": (("2.18.0",), ".cline/data/tasks", 1, "cline"),  # the XML tool form
}


def _copy_stores(cli, stores, target) -> None:
    """The stores as the CLI left them, less Gemini CLI's `.project_root` markers and OpenCode's logs (not
    sessions)."""
    if stores == AIDER_HISTORY:
        target.mkdir(parents=True)
        shutil.copy(cli.workspace / ".aider.chat.history.md", target)
        return
    if stores == QWEN_EXPORTS:  # its markdown and HTML exports are the same session's (test_qwen_code_export): left out
        target.mkdir(parents=True)
        for kind in ("json", "jsonl"):
            shutil.copy(qwen_code_export(cli, kind), target)
        return
    for folder in (stores,) if isinstance(stores, str) else stores:
        if (cli.home / folder).exists():
            shutil.copytree(cli.home / folder, target / folder.rsplit("/", 1)[-1],
                            ignore=shutil.ignore_patterns(".project_root", "log"))


def _roo_code_store(target) -> None:
    """Roo Code's `globalStorage/rooveterinaryinc.roo-cline/tasks/`: two task folders and its `_index.json`."""
    tasks = target / "tasks"
    for n, task in enumerate(("0f5c1c1e-roo", "7a1d2e3f-roo")):
        (tasks / task).mkdir(parents=True)
        (tasks / task / "api_conversation_history.json").write_text(json.dumps(test_roo_code.native_history()))
        (tasks / task / "ui_messages.json").write_text(json.dumps(test_roo_code.native_ui()))
        (tasks / task / "history_item.json").write_text(json.dumps({**test_roo_code.native_item(), "id": task,
                                                                    "number": n + 1}))
        (tasks / task / "task_metadata.json").write_text(json.dumps({"files_in_context": []}))
    (tasks / "_index.json").write_text(json.dumps({"version": 1, "updatedAt": 1, "entries": []}))


def test_ingest_all_reads_every_cli_session_beside_the_samples(run, query, tmp_path, tmp_path_factory):
    mixed = tmp_path / "mixed"
    for folder in ("claude-code", "codex", "swe"):
        shutil.copytree(SAMPLES / folder, mixed / "samples" / folder)
    _roo_code_store(mixed / "cli" / "roo-code")
    expected = {"cline": 2}
    for key, (versions, stores, episodes, format_name) in STORES.items():
        name = key.split("@")[0]
        for version in versions:
            _copy_stores(cli_run(name, version, tmp_path_factory), stores, mixed / "cli" / f"{key}-{version}")
            expected[format_name] = expected.get(format_name, 0) + episodes
    result = run("ingest-all", [mixed])  # ingest, then validate
    assert result.status == "success"
    got = {r["f"]: r["n"] for r in query("SELECT source_format AS f, count(*) AS n FROM episodes "
                                          "WHERE source_uri LIKE '%/cli/%' GROUP BY 1")}
    assert got == expected
    assert query("SELECT stage, rule, reason FROM quarantine WHERE stage <> 'ingest'") == []
    assert query("SELECT rule, reason FROM quarantine WHERE source_uri LIKE '%/cli/%'") == []
    unread = [i.path for i in result.ignored if not i.path.endswith(("PROVENANCE.md", "README.md"))]
    assert [p.split("/cli/", 1)[-1] for p in unread] == ["roo-code/tasks/_index.json"]
    roo = query("SELECT env FROM episodes WHERE source_uri LIKE '%/cli/roo-code/%'")  # not samples/swe/roo-code
    assert len(roo) == 2 and all(json.loads(r["env"])["roo_code"]["modes"] == ["code", "debug"] for r in roo)
