"""Real Harbor trials of its Codex agent, ATIF-v1.7 (../shared/samples/atif/harbor-codex-v1.7: four trials of
PeterMakhnatch/eval-lab, no license, so read there and never copied here; PROVENANCE.md says what a person
counted). The repository promoted them with its own redaction: system and user messages replaced by a digest
marker, with `message_sha256` and `message_chars` added to those steps (not ATIF fields: kept with a warning).
The Codex-context edge case at the end is hand-made in the shape Harbor 0.26's Codex converter writes (every
rollout message of role user becomes a `user` step)."""

import json
from pathlib import Path

from ingest import atif
from ingest.record import Episode
from tests import goldens
from tests.conftest import REPO
from tests.ingest import golden
from tests.parts import require_shared_sample

SHARED = REPO.parent / "shared" / "samples" / "atif" / "harbor-codex-v1.7"
GOLDEN = Path(__file__).parent / "golden" / "atif-harbor-codex-v1.7.json"
TRIALS = {"event-summary__5E3btLv": (5, 1.0), "event-summary__EKfePmM": (6, 1.0),
          "event-summary__h2D9f6f": (6, 1.0), "terminal-bench-html-js-filter__kzGxL7Q": (9, 0.0)}


def _trials():
    root = require_shared_sample(SHARED)
    return {t.name: t for t in sorted(root.glob("*/*__*")) if t.is_dir()}


def test_real_codex_trials_match_the_golden():
    """Each trial as a person counts it in the raw files: one episode, a step per `exec` call plus the closing
    message, the verifier's reward (1 for the three event-summary trials, 0 for the HTML filter)."""
    trials = _trials()
    assert set(trials) == set(TRIALS)
    got = {}
    for name, trial in trials.items():
        records = golden.read_records(atif, trial)
        (ep,) = [r for r in records if isinstance(r, Episode)]
        assert (len(ep.steps), ep.reward) == TRIALS[name], name
        assert ep.outcome == ("success" if ep.reward == 1.0 else "failure") and ep.terminated
        assert [s.action.kind for s in ep.steps] == ["tool_call"] * (len(ep.steps) - 1) + ["message"]
        assert {s.action.tool_name for s in ep.steps[:-1]} == {"exec"}
        got[name] = golden.fingerprint(records, texts="hash", env_keys=("session_id", "harbor"))
    goldens.check_json(GOLDEN, json.loads(json.dumps(got, default=str)), indent=1)


def test_redaction_fields_are_kept_with_a_warning_and_results_stay_as_written():
    """The promotion's `message_sha256` / `message_chars` are not ATIF: kept raw, one warning per step; a
    result's `content` is what Harbor wrote, a Python repr of Codex's content list, kept as text."""
    ep = next(r for r in golden.read_records(atif, _trials()["event-summary__5E3btLv"]) if isinstance(r, Episode))
    unknown = ep.env["atif_unknown_fields"]
    assert set(unknown["steps[3]"]) == {"message_chars", "message_sha256"}  # step_id 4, the first user message
    assert {w["rule"] for w in ep.env["ingest_warnings"]} == {"atif.unknown_field"}
    assert ep.steps[1].observation.text.startswith("[{'type': 'input_text', 'text': 'Script completed")
    assert len(ep.env["system_events"]) == 3  # two more developer messages, and one after the first call


def test_codex_context_written_as_user_steps_is_not_the_task(tmp_path):
    """Harbor's Codex agent turns the user messages Codex injects (AGENTS.md, the environment) into `user`
    steps before the prompt: the task is the prompt; the context stays in what the first action saw."""
    doc = {"schema_version": "ATIF-v1.7", "session_id": "s", "agent": {"name": "codex", "version": "0.147.0"},
           "steps": [
               {"step_id": 1, "source": "system", "message": "<permissions instructions>..."},
               {"step_id": 2, "source": "user", "message": "# AGENTS.md instructions for /app\n\n<INSTRUCTIONS>"
                "\nKeep changes small.\n</INSTRUCTIONS>"},
               {"step_id": 3, "source": "user", "message": "<environment_context>\n  <cwd>/app</cwd>\n"
                "</environment_context>"},
               {"step_id": 4, "source": "user", "message": "Write /app/output/summary.json."},
               {"step_id": 5, "source": "agent", "message": "Done."}]}
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    (ep,) = golden.read_records(atif, path)
    assert ep.task == "Write /app/output/summary.json."
    assert "<environment_context>" in ep.steps[0].observation.text


def test_a_real_trial_s_other_files_are_read_or_listed_with_why():
    """event-summary__EKfePmM as Harbor left it: the verifier's stdout is the main episode's `verifier_output`;
    each other file (Harbor's log, config and lock, the Codex agent's log and rate-limit record, the artifacts it
    collected, the verifier's CTRF and checks) is named with what it is."""
    from pipelines.infra import definition
    from pipelines.infra.plan import find_units

    trial = _trials()["event-summary__EKfePmM"]
    (ep,) = [r for r in golden.read_records(atif, trial) if isinstance(r, Episode)]
    stdout = (trial / "verifier" / "test-stdout.txt").read_text()
    assert ep.env["verifier_output"]["text"] == stdout and '"passed": true}' in stdout
    units, ignored = find_units([str(trial)], definition.load("ingest-all").formats)
    assert [u.format for u in units] == ["atif"]
    why = {str(Path(i.path).relative_to(trial)): i.reason.split(": ", 1)[1] for i in ignored}
    assert set(why) == {"trial.log", "config.json", "lock.json", "agent/codex.txt", "artifacts/manifest.json",
                        "artifacts/app/input/events.jsonl", "artifacts/app/output/summary.json",
                        "verifier/ctrf.json", "verifier/checks.json",
                        "agent/quota/rollout-2026-08-15T07-00-17-01a00438-ab3b-7562-88a9-00b51083d4b1.rate-limits.json"}
    assert why["agent/codex.txt"] == "the agent's own log or recording (its steps are read from agent/trajectory.json)"
    assert why["verifier/ctrf.json"] == "verifier output beside the reward and verifier/test-stdout.txt, which are read"
