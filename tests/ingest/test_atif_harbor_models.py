"""Harbor's own ATIF models as the oracle, at two releases side by side: 0.1.24 (the first with ATIF-v1.5) and
0.26.0 (ATIF-v1.8), each in its own Python 3.12 environment (`.venv/producers/harbor-<version>`, built by
`make setup-test`), run as a subprocess (`tests/ingest/atif_oracle.py`).

For each release: every trajectory `pipelines export atif` writes validates with its `Trajectory` model; every
real trajectory we read (bundled, and ../shared/samples when present) whose schema version the release knows
validates too; and the actions we read are the ones Harbor's model reads: one per tool call of each agent
turn that is not copied context; a turn without calls is what Terminus 2's own reply parser reads in its
message (one keystrokes action per command, with its keystrokes and duration, and the completion claim), or
one message action where that parser finds no reply.
"""

import json
import subprocess
from pathlib import Path

import fsspec
import pytest

from ingest import atif
from ingest.source import Source
from tests.conftest import REPO, SAMPLES
from tests.parts import require

ORACLE = Path(__file__).parent / "atif_oracle.py"
RELEASES = {"0.1.24": "ATIF-v1.5", "0.26.0": "ATIF-v1.8"}  # release -> the newest schema its model accepts
SHARED_TRIALS = REPO.parent / "shared" / "samples" / "atif" / "harbor-terminus-2"


def _oracle(version: str, paths: list[Path]) -> dict:
    python = REPO / ".venv" / "producers" / f"harbor-{version}" / "bin" / "python"
    require(f"Harbor {version}'s ATIF models (a Python 3.12 environment)", python.exists(),
            "make setup-test builds .venv/producers/harbor-<version>")
    out = subprocess.run([str(python), str(ORACLE), *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _real_trajectories() -> list[Path]:
    """The real ATIF files we read: Harbor's goldens, the bundled Claude Code trial, the shared real trials."""
    found = sorted((SAMPLES / "atif").rglob("*.json"))
    found = [p for p in found if b'"ATIF-v' in p.read_bytes()[:300]]
    if SHARED_TRIALS.is_dir():
        found += sorted(SHARED_TRIALS.glob("*/agent/trajectory.json"))
    return found


def _reply_tools(reply: dict | None) -> list:
    """The actions of an agent turn without tool calls as Terminus 2's own parser reads its message: one per
    command it sends and the completion claim, or one message action for a reply it refuses (or no reply)."""
    if not reply or reply["error"]:
        return [None]
    tools = ["bash_command"] * len(reply["commands"]) + ["mark_task_complete"] * reply["complete"]
    return tools or [None]


def _version(path: Path) -> str:
    return json.loads(path.read_text())["schema_version"]


def _key(schema: str) -> tuple[int, ...]:
    return tuple(int(x) for x in schema.removeprefix("ATIF-v").split("."))


@pytest.mark.parametrize("version", RELEASES)
def test_what_export_atif_writes_validates_with_harbors_model(version, run, lake, tmp_path):
    from pipelines.stages.export_atif import export_atif
    from pipelines.infra.lake import Lake
    run("ingest-swe", [SAMPLES / "swe", SAMPLES / "atif"])
    summary = export_atif(Lake(lake), None, "swe", str(tmp_path / "out"))
    files = [tmp_path / "out" / shard["path"] for shard in summary["shards"]]
    assert len(files) == summary["episodes"] == 22  # the samples' swe and atif episodes (tests/ingest/test_atif.py)
    verdicts = _oracle(version, files)
    assert {path: v.get("error") for path, v in verdicts.items() if "error" in v} == {}


@pytest.mark.parametrize("version", RELEASES)
def test_real_trajectories_validate_and_we_read_the_actions_harbor_reads(version):
    files = _real_trajectories()
    assert len(files) >= 8  # 7 Harbor goldens and the Claude Code trial (and the shared trials when present)
    known = [p for p in files if _key(_version(p)) <= _key(RELEASES[version])]
    verdicts = _oracle(version, known)
    refused = {Path(path).name: v["error"] for path, v in verdicts.items() if "error" in v}
    if version == "0.1.24":
        # Harbor 0.1.31's OpenHands writer added `agent.tool_definitions` still calling it ATIF-v1.5, and the
        # first v1.5 release's model forbids that field: one schema version, two shapes (we read both)
        assert list(refused) == ["hello-world.trajectory.json"]
        assert refused["hello-world.trajectory.json"].startswith(
            "1 validation error for Trajectory agent.tool_definitions Extra inputs are not permitted")
    else:
        assert refused == {}
    compared = 0
    for path in known:
        if "error" in verdicts[str(path)]:
            continue
        harbor_steps = verdicts[str(path)]["steps"]
        doc = json.loads(path.read_text())
        if any((s.get("extra") or {}).get("is_sidechain") for s in doc["steps"]):
            continue  # Claude Code sidechains leave the main line by design (test_atif_harbor.py)
        ours = [r for r in atif.read(Source(fs=fsspec.filesystem("file"), path=str(path), uri=path.name,
                                            put_blob=lambda *a: "sha256:0")) if isinstance(r, atif.Episode)]
        expected = [tool for s in harbor_steps if s["source"] == "agent" and not s["copied"]
                    for tool in (s["tools"] or _reply_tools(s["reply"]))]
        assert [s.action.tool_name for s in ours[0].steps] == expected, path.name
        sent = [[keys, wait] for s in harbor_steps if s["source"] == "agent" and not s["copied"] and s["reply"]
                and not s["reply"]["error"] for keys, wait in s["reply"]["commands"]]
        assert [[s.action.text, s.action.duration_s] for s in ours[0].steps
                if s.action.kind == "keystrokes" and s.action.raw.startswith('{"message"')] == sent, path.name
        compared += 1
    assert compared >= (6 if version == "0.1.24" else 7)


# Terminus 2 replies as a raw-content trajectory keeps them (the message, no tool calls): the odd ones Harbor's
# parser tolerates, repairs or refuses, each read by that parser and by us
_REPLIES = [
    'Sure.\n{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 0.5}]}\nDone.',
    '```json\n{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "a\\n"}, '
    '{"keystrokes": "b\\n", "duration": "3"}, {"keystrokes": "c\\n", "duration": true}]}\n```',
    '{"analysis": "a", "plan": "p", "commands": [], "task_complete": "Yes"}',
    '{"analysis": "a", "plan": "p", "commands": [{"duration": 1}], "task_complete": true}',
    '{"analysis": "a", "plan": "p", "commands": [{"duration": 1}]}',
    '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "x\\n", "duration": 1}]',
    '{"analysis": "a", "commands": [{"keystrokes": "y\\n", "duration": 1}]}',
    "I will run ls now.",
    '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "z\\n", "duration": 2}], "task_complete": 1}',
    '{"analysis": "a", "plan": "p", "commands": "ls"}',
    'First {bad} then {"analysis": "a", "plan": "p", "commands": [{"keystrokes": "pwd\\n", "duration": 0.1}]}',
    '{"analysis": "", "plan": "p", "commands": [{"keystrokes": "C-c", "duration": 0.1}, '
    '{"keystrokes": "exit\\n", "duration": 0.1}], "task_complete": false}',
]


_XML_REPLIES = [
    'Here:\n<response>\n<analysis>a</analysis>\n<plan>p</plan>\n<commands>\n'
    '<keystrokes duration="0.5">ls -la\n</keystrokes>\n<keystrokes>cd /app\n</keystrokes>\n'
    "<keystrokes duration='x'>pwd\n</keystrokes>\n</commands>\n</response>\nthanks",
    '<response><analysis>a</analysis><plan>p</plan><commands/><task_complete> TRUE </task_complete></response>',
    '<response><analysis>a</analysis><plan>p</plan></response>',
    '<response><analysis>a</analysis><plan>p</plan><task_complete>true</task_complete></response>',
    "No XML at all.",
    '<response><analysis>a</analysis><plan>p</plan><commands><keystrokes duration="2">echo &lt;x&gt;\n'
    '</keystrokes></commands>',
    '<response><analysis>a &amp; b</analysis><plan>p</plan><commands></commands></response>',
]


def _raw_content_trajectory(path: Path, replies: list[str], parser: str = "json") -> Path:
    steps = [{"step_id": 1, "source": "user", "message": "Task Description:\nDo it.\n\nCurrent terminal state:\n$ "}]
    steps += [{"step_id": n + 2, "source": "agent", "model_name": "m", "message": reply,
               "observation": {"results": [{"content": f"screen {n}"}]}} for n, reply in enumerate(replies)]
    path.write_text(json.dumps({"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {
        "name": "terminus-2", "version": "2.0.0", "model_name": "m", "extra": {"parser": parser}}, "steps": steps}))
    return path


def _read_one(path: Path):
    [episode] = [r for r in atif.read(Source(fs=fsspec.filesystem("file"), path=str(path), uri="t.json",
                                             put_blob=lambda *a: "sha256:0")) if isinstance(r, atif.Episode)]
    return episode


@pytest.mark.parametrize("version", RELEASES)
def test_raw_terminus_replies_are_read_as_terminus_2s_own_parser_reads_them(version, tmp_path):
    path = _raw_content_trajectory(tmp_path / "trajectory.json", _REPLIES)
    harbor_steps = _oracle(version, [path])[str(path)]["steps"][1:]
    replies = [s["reply"] for s in harbor_steps]
    assert sum(bool(r["error"]) for r in replies) == 4  # missing keystrokes, no plan, not JSON, commands a string
    episode = _read_one(path)
    steps = episode.steps
    assert [s.action.tool_name for s in steps] == [t for r in replies for t in _reply_tools(r)]
    assert [[s.action.text, s.action.duration_s] for s in steps if s.action.kind == "keystrokes"] == [
        c for r in replies if not r["error"] for c in r["commands"]]
    # every action keeps the reply it came from; a keystrokes action sees the screen after its reply's last command
    owner = [n for n, r in enumerate(replies) for _ in _reply_tools(r)]
    assert all(json.loads(s.action.raw)["message"] == _REPLIES[n] for s, n in zip(steps, owner))
    for k in range(1, len(steps)):
        if owner[k] != owner[k - 1]:
            assert steps[k].observation.text == f"screen {owner[k - 1]}"
    # the replies Terminus 2 refused that meant to be replies stay messages, each with a warning naming its turn
    warned = [w["reason"] for w in episode.env["ingest_warnings"] if w["rule"] == "atif.undecoded_reply"]
    assert [w.split(": ")[1] for w in warned] == ["steps[5].message", "steps[7].message", "steps[10].message"]
    assert steps[owner.index(2)].reasoning == "Analysis: a\nPlan: p"
    assert episode.terminated is False  # the completion claims were earlier turns; the last turn claims nothing


@pytest.mark.parametrize("version", RELEASES)
def test_raw_terminus_xml_replies_are_read_as_its_xml_parser_reads_them(version, tmp_path):
    path = _raw_content_trajectory(tmp_path / "trajectory.json", _XML_REPLIES, parser="xml")
    replies = [s["reply"] for s in _oracle(version, [path])[str(path)]["steps"][1:]]
    assert [bool(r["error"]) for r in replies] == [False, False, True, False, True, False, False]
    episode = _read_one(path)
    assert [s.action.tool_name for s in episode.steps] == [t for r in replies for t in _reply_tools(r)]
    assert [[s.action.text, s.action.duration_s] for s in episode.steps if s.action.kind == "keystrokes"] == [
        c for r in replies if not r["error"] for c in r["commands"]] == [
        ["ls -la\n", 0.5], ["cd /app\n", 1.0], ["pwd\n", 1.0], ["echo &lt;x&gt;\n", 2.0]]
    warned = [w["reason"].split(": ")[1] for w in episode.env["ingest_warnings"] if w["rule"] == "atif.undecoded_reply"]
    assert warned == ["steps[3].message"]  # no commands and no claim; the text without XML is a plain message
