"""`ingest-all` over one folder mixing what the producers wrote at test time (mini-swe-agent 1.x and 2.x,
the OpenHands SDK) with the bundled SWE samples: every trajectory is read by its own format, nothing a
person would call a trace is left as "no format reads it", and validate drops none of them."""

import shutil

from tests.conftest import SAMPLES
from tests.ingest.swe.producer_runs import mini_swe_agent_run, openhands_sdk_run
from tests.ingest.swe.test_minisweagent import VERSIONS
from tests.ingest.swe.test_openhands_v1 import VERSION as OPENHANDS_VERSION


def test_ingest_all_reads_every_producers_output_beside_the_samples(run, query, tmp_path, tmp_path_factory):
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES / "swe", mixed / "swe")
    # the bundled samples: SWE-agent's three layouts, OpenHands V0's three streams, one real mini-swe-agent 1.15 run,
    # two real Gemini CLI recordings (shared under names of their own), a real OpenCode export and a Roo Code
    # diagnostics file (its task history, read by the Cline family's reader), a Qwen Code markdown export
    expected = {"sweagent": 3, "openhands": 3, "minisweagent": 1, "openhands_v1": 0, "gemini_cli": 2, "opencode": 1,
                "cline": 1, "qwen_code_markdown": 1}
    for version in VERSIONS:
        out, _ = mini_swe_agent_run(version, tmp_path_factory)
        for traj in out.glob("*/*.traj.json"):
            shutil.copy(traj, mixed / f"mini-{version}-{traj.name}")
            expected["minisweagent"] += 1
    conversations, found = openhands_sdk_run(OPENHANDS_VERSION, tmp_path_factory)
    shutil.copytree(conversations, mixed / "conversations")
    expected["openhands_v1"] += len(found)
    result = run("ingest-all", [mixed])  # ingest, then validate
    assert result.status == "success"
    assert query("SELECT stage, rule, reason FROM quarantine WHERE stage <> 'ingest'") == []
    got = {r["source_format"]: r["n"] for r in query(
        "SELECT source_format, count(*) AS n FROM episodes GROUP BY 1")}
    assert got == expected
    traces = [i.path for i in result.ignored if not i.path.endswith(("PROVENANCE.md", "README.md"))]
    assert traces == []
