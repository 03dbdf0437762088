"""The runner every part-group stage goes through (`pipelines.infra.stage_runner`), with a stage of the test's
own: it drops the episodes its options name, skips the groups its memo table says it did, runs in-process and
as Ray tasks, and commits what changed."""

import os
import shutil
from dataclasses import dataclass

import pyarrow.compute as pc
import pytest

from pipelines.infra import datasets
from pipelines.infra.executor import Resources
from pipelines.infra.lake import Lake
from pipelines.infra.runs import open_catalog
from pipelines.infra.stage_runner import Outcome, PartsStage, Plan, run_parts
from pipelines.stages import StageContext, StageResult
from tests.conftest import SAMPLES


@dataclass
class DropJob:
    lake_url: str
    dataset: str
    drop: list[str]


def drop_episodes(group: dict[str, list[str]], job: DropJob) -> tuple[dict[str, list[str]], int]:
    """The group without the named episodes (written again only when it loses one), and its steps read."""
    if "fail" in job.drop:
        raise ValueError("told to fail")
    lake = Lake(job.lake_url)
    episodes = datasets.read_parts(lake, group["episodes"], "episodes")
    steps = datasets.read_parts(lake, group["steps"], "steps")
    keep = lambda t: t.filter(pc.invert(pc.is_in(t["episode_id"], pc.cast(job.drop, "string"))))  # noqa: E731
    if keep(episodes).num_rows == episodes.num_rows:
        return group, steps.num_rows
    written = datasets.write_group(lake, job.dataset, {"episodes": keep(episodes), "steps": keep(steps)}, "drop")
    return {t: [p] for t, p in written.items()}, steps.num_rows


def _done(cat, dataset: str) -> set[str]:
    known = cat.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'drop_done'").fetchone()[0]
    return {r[0] for r in cat.con.execute("SELECT stem FROM drop_done WHERE dataset = ?", [dataset]).fetchall()} \
        if known else set()


def _plan(run, cat) -> Plan:
    done = _done(cat, run.dataset)
    todo = [g for g in run.groups if datasets.group_stem(g) not in done]
    return Plan(todo, DropJob(run.ctx.lake.url, run.dataset, run.options["drop"]), todo, f"drop {run.dataset}")


def _reduce(run, results) -> Outcome:
    new = {datasets.group_stem(old): group for old, (group, _) in zip(run.plan.items, results)}
    groups = [new.get(datasets.group_stem(g), g) for g in run.groups]
    parts = {t: [p for g in groups for p in g[t]] for t in ("episodes", "steps")}
    changed = any(parts[t] != run.version.parts[t] for t in parts)
    return Outcome(parts if changed else {}, note="drop: named episodes removed", state=results)


def _record(run, cat, number, outcome) -> None:
    """The groups as the new version holds them are done (a rewritten group has a new stem)."""
    cat.con.execute("CREATE TABLE IF NOT EXISTS drop_done (dataset VARCHAR, stem VARCHAR)")
    for group, _ in outcome.state:
        cat.con.execute("INSERT INTO drop_done VALUES (?, ?)", [run.dataset, datasets.group_stem(group)])


def _finish(run, outcome, number, created) -> StageResult:
    steps = sum(n for _, n in outcome.state)
    return StageResult(steps, steps, version=number if created else None, summary=f"{steps} steps read")


DROP = PartsStage("drop", drop_episodes, 20 * (1 << 20), _plan, _reduce, _finish, options=dict,
                  opening=lambda run, results: f"{len(run.plan.items)} of {len(run.groups)} part groups on "
                                               f"{run.executor}", record=_record)


def _context(lake: str, drop: list[str], executor: str, lines: list[str]) -> StageContext:
    return StageContext(Lake(lake), None, "android", "r-drop", {"drop": drop}, lines.append, executor,
                        resources=Resources(cpus=1, memory_mb=256))


def _two_groups(run) -> None:
    """The DroidBot run and the uiautomator dumps, ingested as part groups of their own."""
    run("ingest-android", [SAMPLES / "android" / "droidbot-run", SAMPLES / "android" / "uiautomator-dump"],
        stages=["ingest"], task_mb=0.01, executor="local")


def _episode_of(lake: str, uri_part: str) -> str:
    with open_catalog(Lake(lake), read_only=True) as cat:
        return cat.sql(f"SELECT episode_id FROM episodes WHERE source_uri LIKE '%{uri_part}%'").fetchone()[0]


def test_a_stage_runs_its_groups_commits_what_changed_and_skips_them_next_time(run, lake):
    _two_groups(run)
    dropped = _episode_of(lake, "droidbot-run")
    lines: list[str] = []
    result = run_parts(_context(lake, [dropped], "local", lines), DROP)
    assert lines == ["drop android v1: 2 of 2 part groups on local"]
    assert result.version == 2 and result.records_in > 0
    with open_catalog(Lake(lake), read_only=True) as cat:
        assert cat.sql("SELECT note FROM versions WHERE version = 2").fetchone()[0] == "drop: named episodes removed"
        assert cat.sql(f"SELECT count(*) FROM episodes WHERE episode_id = '{dropped}'").fetchone()[0] == 0
        assert cat.sql("SELECT count(*) FROM drop_done").fetchone()[0] == 2

    again: list[str] = []
    result = run_parts(_context(lake, [dropped], "local", again), DROP)  # every group done: none read again
    assert again == ["drop android v2: 0 of 2 part groups on local"]
    assert result.version is None and result.records_in == 0


def test_a_failing_group_names_itself_and_commits_nothing(run, lake):
    _two_groups(run)
    with pytest.raises(RuntimeError, match=r"part group \S+ failed: ValueError: told to fail"):
        run_parts(_context(lake, ["fail"], "local", []), DROP)
    with open_catalog(Lake(lake), read_only=True) as cat:
        assert cat.current_version("android").version == 1


def test_on_ray_its_tasks_ask_for_the_declared_resources_and_commit_what_in_process_commits(run, lake, tmp_path):
    import ray

    _two_groups(run)
    dropped = _episode_of(lake, "droidbot-run")
    shutil.copytree(lake, tmp_path / "on-ray")  # same ingest, so the same written parts' names
    run_parts(_context(lake, [dropped], "local", []), DROP)
    lines: list[str] = []
    ray.init(num_cpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             configure_logging=False, _node_ip_address="127.0.0.1")
    try:
        run_parts(_context(str(tmp_path / "on-ray"), [dropped], "ray", lines), DROP)
    finally:
        ray.shutdown()
    assert lines[-1] == "drop android v1: 2 of 2 part groups on ray", lines
    assert lines[0].startswith("  drop android: 2 part groups on Ray, each asking CPU 1, memory 256 MB, given CPU 1;")
    parts = []
    for where in (lake, str(tmp_path / "on-ray")):
        with open_catalog(Lake(where), read_only=True) as cat:
            parts.append(cat.current_version("android").parts)
    assert parts[0] == parts[1] and parts[0]["episodes"] != []


@dataclass
class CountJob:
    lake_url: str
    fail_on: str | None  # a group stem whose count fails


def count_steps(group: dict[str, list[str]], job: CountJob) -> tuple[str, int]:
    if datasets.group_stem(group) == job.fail_on:
        raise ValueError("told to fail")
    return datasets.group_stem(group), datasets.read_parts(Lake(job.lake_url), group["steps"], "steps").num_rows


def _write_counts(run, results) -> Outcome:
    """Each group's line written as its result arrives (a stream: export writes its shards this way)."""
    with open(run.options["out"], "w") as out:
        for stem, n in results:
            out.write(f"{stem} {n}\n")
            out.flush()
    return Outcome(state=type(results).__name__)


COUNT = PartsStage(
    "count", count_steps, 20 * (1 << 20),
    lambda run, cat: Plan(run.groups, CountJob(run.ctx.lake.url, run.options.get("fail_on")), run.groups,
                          f"count {run.dataset}", window=1),
    _write_counts, lambda run, outcome, number, created: outcome.state, options=dict,
    abandon=lambda run: os.remove(run.options["out"]))


def test_a_streamed_stage_gets_results_in_order_as_they_come_and_a_failure_undoes_its_files(run, lake, tmp_path):
    _two_groups(run)
    out = tmp_path / "counts.txt"
    with open_catalog(Lake(lake), read_only=True) as cat:
        stems = [datasets.group_stem(g) for g in datasets.part_groups(cat.current_version("android"))]
    ctx = StageContext(Lake(lake), None, "android", "r-count", {"out": str(out)}, lambda line: None, "local")
    assert run_parts(ctx, COUNT) == "generator"  # not a list: the reduce consumed them one by one
    assert [line.split()[0] for line in out.read_text().splitlines()] == stems

    ctx.options = {"out": str(out), "fail_on": stems[1]}
    with pytest.raises(RuntimeError, match=f"part group {stems[1]} failed: ValueError: told to fail"):
        run_parts(ctx, COUNT)
    assert not os.path.exists(out)  # the first group's line was written, then undone


def stem_sent(group: dict[str, list[str]], job: CountJob, send) -> str:
    send(("started", datasets.group_stem(group)))
    send(("halfway", datasets.group_stem(group)))
    return datasets.group_stem(group)


def test_in_process_an_items_pieces_reach_the_driver_as_sent_and_its_driver_step_runs_before_the_next_item(run, lake):
    """`report` gets what a running item sends at once; `each` gets every item's result in item order before the
    next item starts; what `each` returns is what the reduce gets."""
    _two_groups(run)
    events: list[tuple[str, str]] = []
    stage = PartsStage(
        "events", stem_sent, 20 * (1 << 20),
        lambda run, cat: Plan(run.groups, CountJob(run.ctx.lake.url, None), run.groups, f"events {run.dataset}"),
        lambda run, results: Outcome(state=results), lambda run, outcome, number, created: outcome.state,
        report=lambda run, piece: events.append(piece),
        each=lambda run, group, stem: events.append(("each", stem)) or f"done {stem}")
    results = run_parts(StageContext(Lake(lake), None, "android", "r-events", {}, lambda line: None, "local"), stage)
    with open_catalog(Lake(lake), read_only=True) as cat:
        stems = [datasets.group_stem(g) for g in datasets.part_groups(cat.current_version("android"))]
    assert len(stems) == 2
    assert events == [(kind, stem) for stem in stems for kind in ("started", "halfway", "each")]
    assert results == [f"done {stem}" for stem in stems]
