"""Real OpenCode sessions from public repositories, each against a golden a person read against the raw file.

Bundled (MIT): victoryforphil/dark-factory @ 65455d0, an `opencode export` of OpenCode 1.2.5 in
`samples/swe/opencode/victoryforphil-dark-factory/` (see its PROVENANCE.md).

Read where they lie in `../shared/samples/opencode/` (the repository carries no license, so they are never copied
here; goldens with `texts="hash"`):

- Marshall-Ge/DLToolKit @ 162a913ed74715f19f072d118683999e98abc50a, `.opencode/sessions/ses_0013e6123ffebAIw1ulKxxwsFG.json`
  and `.opencode/sessions/ses_0015a7fe9ffelNcTeZa4tD26TH.json` -> `opencode/marshall-ge-dltoolkit/`: documents
  `opencode export` wrote (OpenCode 1.18.18, the repository's shell alias exports each session after its run),
  `big-pickle` through the `opencode` provider. The first: a prompt answered after three calls in two model turns
  (`bash` `ls -la`, `read` of README.md and `bash` `ls -R ...`, both shells exiting 0), then a second prompt an
  hour later answered at once; the second: two prompts, each answered with text, reasoning and token counts.
"""

from __future__ import annotations

from ingest.record import Episode, Rejected
from ingest.swe import opencode
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample
from tests.ingest import golden

SHARED = REPO.parent / "shared" / "samples" / "opencode" / "marshall-ge-dltoolkit"
BUNDLED = REPO / "samples" / "swe" / "opencode" / "victoryforphil-dark-factory"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"


def test_an_export_with_shell_and_read_calls_over_two_prompts():
    path = require_shared_sample(SHARED / "ses_0013e6123ffebAIw1ulKxxwsFG.json")
    assert opencode.units([str(path)], golden.head) == [str(path)]
    records = read_records(opencode, path)
    check(records, GOLDEN / "opencode-dltoolkit-tools.json", texts="hash", env_keys=("opencode",))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("command", "bash"), ("tool_call", "read"), ("command", "bash"), ("message", None), ("message", None)]
    assert [s.action.code for s in ep.steps if s.action.kind == "command"] == ["ls -la", "ls -R dltoolkit script tests"]
    assert ep.steps[1].observation.exit_code == 0 and ep.steps[3].observation.exit_code == 0
    assert ep.steps[2].observation.text.startswith("<path>/Users/marshall/Projects/DLToolKit/README.md</path>")
    assert ep.steps[4].observation.text == "主机2握手，时刻1429" and ep.terminated and ep.agent == "big-pickle"
    assert ep.env["opencode"]["version"] == "1.18.18"


def test_an_export_of_two_prompts_answered_with_text():
    path = require_shared_sample(SHARED / "ses_0015a7fe9ffelNcTeZa4tD26TH.json")
    records = read_records(opencode, path)
    check(records, GOLDEN / "opencode-dltoolkit-chat.json", texts="hash", env_keys=("opencode",))
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [s.action.text for s in ep.steps] == ["收到，连接正常。有什么需要帮忙的？", "收到，时刻 1300。还有其它测试吗？"]
    assert all(s.reasoning for s in ep.steps) and ep.task == "测试，连接来自主机1"


def test_a_bundled_export_of_a_skill_a_subagent_and_the_answer():
    """Read by hand against the file: one prompt; gpt-5.3-codex (`openai`) calls `skill` (its result the skill's
    text), then `task` for the `gitter` subagent (its result the subagent's report, naming the subagent's session),
    then answers with text: terminated. Each result is the observation of the step after its call; token counts
    summed over the three model calls (its costs are all 0)."""
    path = BUNDLED / "session__jolly-eagle__ses_39b5d713cffeRgAoxPIwS3Plus.json"
    assert opencode.units([str(path)], golden.head) == [str(path)]
    records = read_records(opencode, path)
    check(records, GOLDEN / "opencode-dark-factory-subagent.json", env_keys=("opencode",))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [
        ("tool_call", "skill"), ("tool_call", "task"), ("message", None)]
    assert ep.steps[1].observation.text.startswith('<skill_content name="gitter-commit">')
    assert ep.steps[2].observation.text.startswith("task_id: ses_39b5d3ed8ffea9fQ9vQMuZnTtO")
    assert ep.steps[2].action.text.startswith("Done — I loaded `gitter-commit`") and ep.terminated
    assert ep.agent == "gpt-5.3-codex" and ep.key == "ses_39b5d713cffeRgAoxPIwS3Plus"
    assert ep.task.startswith("Use the `gitter-commit` skill") and ep.steps[0].reasoning == (
        "**Confirming skill and route usage**")
    env = ep.env["opencode"]
    assert env["version"] == "1.2.5" and env["providers"] == ["openai"]
    assert env["tokens"] == {"total": 50159, "input": 17656, "output": 631, "reasoning": 142, "cache_read": 31872,
                             "cache_write": 0}
