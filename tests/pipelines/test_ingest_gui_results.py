"""`pipelines run ingest-all` over one folder that mixes every bundled sample with GUI agents' result files:
WebVoyager result folders of two repositories, an AndroidWorld harness JSON result (hand-made in the real
files' shape) and, when ../shared/samples holds them, the real harness results. Every run is read and
validated, the bundled samples keep the reader they had, and no file a person would call part of a run is
left as "no format reads it"."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson

from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.conftest import SAMPLES
from tests.ingest.android import test_androidworld_json as awj

BROWSER_DATA = Path(__file__).parents[1] / "ingest" / "browser" / "data"
WEBVOYAGER = {"webvoyager-gpt4v/taskWolfram Alpha--6": 3, "webvoyager-gemini/taskamazon--04": 12}  # steps


def _mixed(tmp_path: Path) -> tuple[Path, int]:
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES, mixed / "samples")
    for rel in WEBVOYAGER:
        shutil.copytree(BROWSER_DATA / rel, mixed / "gui" / rel)
    screen = [awj._element("OK", (0, 0, 720, 1600)), awj._element("Go", (100, 200, 300, 400))]
    records = [awj._record(1, 'Reason: go\nAction: {"action_type": "click", "index": 1}', screen),
               awj._record(2, 'Action: {"action_type": "status", "goal_status": "complete"}', screen, None)]
    harness = mixed / "gui" / "androidworld" / "Task_base_model_trial1.json"
    harness.parent.mkdir(parents=True)
    harness.write_bytes(orjson.dumps(awj._doc(records, task_actually_successful=True, agent_claimed_done=True)))
    real = 0
    for rel in (awj.SUCCESS, awj.FAILURE):
        if (awj.ROOT / rel).exists():
            shutil.copy(awj.ROOT / rel, harness.parent / Path(rel).name)
            real += 1
    return mixed, real


def test_gui_results_mixed_with_the_samples_keep_every_reader(tmp_path):
    formats = definition.load("ingest-all").formats
    before = {u.uri.split("/", 1)[1]: u.format for u in find_units([str(SAMPLES)], formats)[0]}
    mixed, real = _mixed(tmp_path)
    units, ignored = find_units([str(mixed)], formats)
    after = {u.uri.split("/", 1)[1]: u.format for u in units}
    assert {k.removeprefix("samples/"): v for k, v in after.items() if not k.startswith("gui/")} == before
    assert {k: v for k, v in after.items() if k.startswith("gui/")} == {
        **{f"gui/{rel}": "webvoyager" for rel in WEBVOYAGER},
        **{f"gui/androidworld/{p.name}": "androidworld_json" for p in (mixed / "gui" / "androidworld").iterdir()}}
    assert [i.path for i in ignored if "/gui/" in i.path] == []  # screenshots go with their folder


def test_ingest_all_reads_and_validates_every_gui_run(tmp_path, run, query):
    mixed, real = _mixed(tmp_path)
    result = run("ingest-all", [mixed])
    assert result.status == "success", result.messages
    episodes = query("SELECT episode_id, source_format, num_steps, outcome, reward FROM episodes "
                     "WHERE source_format IN ('webvoyager', 'androidworld_json') ORDER BY num_steps")
    assert [(e["source_format"], e["num_steps"]) for e in episodes if e["source_format"] == "webvoyager"] == [
        ("webvoyager", 3), ("webvoyager", 12)]
    harness = [(e["num_steps"], e["outcome"]) for e in episodes if e["source_format"] == "androidworld_json"]
    assert (2, "success") in harness and len(harness) == 1 + real
    # validated: no error anywhere in the mix, nothing of theirs quarantined
    assert result.stage_summaries and " 0 errors " in result.stage_summaries[0]
    assert [r for r in query("SELECT source_uri FROM quarantine") if "/gui/" in (r["source_uri"] or "")] == []
    # the tap lands on the centre of element 1's bounds, (200, 300) of the 720x1600 screen
    tap = query("SELECT s.action.x AS x, s.action.y AS y, s.observation.width AS w, s.observation.height AS h "
                "FROM steps s JOIN episodes e USING (episode_id) WHERE e.source_format = 'androidworld_json' "
                "AND e.num_steps = 2 AND s.step_index = 0")[0]
    assert (round(tap["x"] * tap["w"]), round(tap["y"] * tap["h"])) == (200, 300)
    shots = query("SELECT count(*) AS n FROM steps s JOIN episodes e USING (episode_id) "
                  "WHERE e.source_format = 'webvoyager' AND s.observation.screenshot IS NOT NULL")[0]["n"]
    assert shots == 3 + 9
    ignored = [Path(r["path"]).name for r in query("SELECT path FROM ignored_inputs") if "/gui/" in r["path"]]
    assert ignored == []
