"""The real Terminal-Bench trial in ../shared/samples/ubuntu/terminal-bench-trial (mini-swe-agent with
claude-sonnet-4 on `incompatible-python-fasttext`, resolved; see its PROVENANCE.md). It has no license, so it
is read where it lies and never copied into the repository; these tests skip when ../shared is absent (tests/parts.py).

`golden/terminal-bench-trial.json` is the episode's fingerprint, checked by hand against the raw files: 18
mini-swe-agent turns in agent.cast / agent.log (`mini-swe-agent (step 1..18, $...)`), the commands as the
log shows them, one `<returncode>1</returncode>` (turn 2's `python --version && python -c ...`) and 16 zeros,
no reply after the submission; the reply times from the cast (header timestamp 1755313276 = 03:01:16 UTC,
turn 1's reply at +143.360671 s); the tests' three `passed` from results.json. Texts are kept as sha256
prefixes and a command's first 48 characters, not whole, for the trial's lack of a license. After a
deliberate change to the reader, rewrite it with `TRAJFORGE_REGEN_GOLDENS=1` (tests/goldens.py) and check the diff by hand.
"""

import hashlib
import json
import re
import shutil
from pathlib import Path

import fsspec
import pytest

from ingest.record import Episode
from ingest.source import Source
from ingest.ubuntu import terminal_bench
from tests import goldens
from tests.conftest import REPO
from tests.parts import require_shared_sample

SAMPLE = REPO.parent / "shared" / "samples" / "ubuntu" / "terminal-bench-trial"
TRIAL = SAMPLE / "incompatible-python-fasttext.base_with_hint.1-of-1.2025-08-15__19-28-24"
GOLDEN = Path(__file__).parent / "golden" / "terminal-bench-trial.json"


@pytest.fixture(autouse=True)
def _trial_is_there():
    require_shared_sample(TRIAL)


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(ep: dict, steps: list[dict]) -> dict:
    env = json.loads(ep["env"])
    final = steps[-1]["final_observation"]
    return {
        "episode": {
            "task_id": env["task_id"], "task_sha256": _sha(ep["task"]), "agent": ep["agent"],
            "agent_kind": env["agent_kind"], "agent_version": env["agent_version"], "model": env["model"],
            "outcome": ep["outcome"], "reward": ep["reward"], "num_steps": ep["num_steps"],
            "started_at": ep["started_at"].isoformat(), "ended_at": ep["ended_at"].isoformat(),
            "last_step_terminal": steps[-1]["is_terminal"], "tests": env["tests"],
            "harness_commands": [f"{c['line']}:{c['phase']}" for c in env["harness_commands"]],
            "final_observation": {"kind": final["kind"], "width": final["width"], "height": final["height"],
                                  "last_line": final["text"].rsplit("\n", 1)[-1], "sha256": _sha(final["text"])},
        },
        "steps": [{
            "index": s["step_index"], "timestamp": s["timestamp"].isoformat(), "action": s["action"]["kind"],
            "code_head": (s["action"]["code"] or "").split("\n", 1)[0][:48], "code_sha256": _sha(s["action"]["code"]),
            "reasoning_sha256": _sha(s["reasoning"]), "observation": s["observation"]["kind"],
            "exit_code": s["observation"]["exit_code"], "observation_sha256": _sha(s["observation"]["text"]),
        } for s in steps],
    }


def test_real_trial_is_the_agents_episode_and_matches_the_golden(run, query):
    result = run("ingest-ubuntu", [SAMPLE])
    assert result.status == "success" and result.episodes == 1 and result.steps == 18 and result.quarantined == 0
    # validate keeps it
    assert query("SELECT records_in, records_out, quarantined FROM stage_stats WHERE stage = 'validate'") == [
        {"records_in": 18, "records_out": 18, "quarantined": 0}]
    assert query("SELECT count(*) AS n FROM quarantine")[0]["n"] == 0
    ep = query("SELECT * FROM episodes")[0]
    steps = query("SELECT * FROM steps ORDER BY step_index")
    got = fingerprint(ep, steps)
    goldens.check_json(GOLDEN, got, indent=1)


def _read(path: Path) -> Episode:
    source = Source(fsspec.filesystem("file"), str(path), path.name, lambda *a: "sha256:")
    records = list(terminal_bench.read(source))
    assert [type(r).__name__ for r in records] == ["Episode"]
    return records[0]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_real_trial_steps_agree_with_the_log_and_the_pane(tmp_path):
    from_cast = _read(TRIAL)
    # the same session's raw output without the cast (tmux pipe-pane): the same steps, without times
    copy = tmp_path / TRIAL.name
    shutil.copytree(TRIAL, copy)
    (copy / "sessions" / "agent.cast").unlink()
    from_log = _read(copy)
    assert [(s.action.code, s.reasoning, s.observation.text) for s in from_log.steps] == \
           [(s.action.code, s.reasoning, s.observation.text) for s in from_cast.steps]
    assert all(s.timestamp is None for s in from_log.steps)
    # tmux's own rendering of the session (post-agent.txt, wrapped at 160 columns by tmux): every command and
    # reply is there, character for character but for line breaks and spaces
    pane = _squeeze((TRIAL / "panes" / "post-agent.txt").read_text())
    for step in from_cast.steps:
        assert _squeeze(step.action.code) in pane
        assert _squeeze(step.observation.text) in pane
    # none of the harness's keystrokes is a step; the tests are kept apart
    harness = {terminal_bench.keystrokes(c["keys"]).strip() for c in from_cast.env["harness_commands"]}
    assert not harness & {s.action.code for s in from_cast.steps}
    assert from_cast.env["tests"] == {"test_predict_raises_no_error": "passed", "test_correct_output": "passed",
                                      "test_site_packages_not_overly_changed": "passed"}
    assert from_cast.env["test_screen"].endswith("3 passed in 1.21s " + "=" * 71 + "\nroot@4e6b68a35076:/app#")
    # the commands Rich broke at 160 columns read as they ran
    assert "np.array(y_true, copy=False)" in from_cast.steps[13].action.code
    assert "np.array(recall, copy=False)" in from_cast.steps[14].action.code
