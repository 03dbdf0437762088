"""Every stage is one `Stage` with declared resources: a definition names any of them (eval and sample included),
its options and resources are checked before anything runs, a definition runs ingest -> validate -> dedup ->
export -> eval end to end against the scripted stand-in model and judge (`judge_servers`, named so), and on Ray
each stage's tasks ask for what it declares and get it: a stage declared to need a GPU gets one, the others do
not (a Ray started with one declared GPU; the two-node placement is in `test_ray_cluster`)."""

import re
import shutil

import pytest

from pipelines.infra import definition
from pipelines.infra.definition import DefinitionError, parse
from pipelines.infra.executor import Resources
from pipelines.infra.lake import Lake
from pipelines.infra.runner import run_ingest
from pipelines.infra.runs import open_catalog
from pipelines.stages import STAGES, resources_for
from tests.conftest import SAMPLES
from tests.pipelines.judge_servers import ScriptedJudgeAndWorld, all_scores, verdict_text

HEAD = 'dataset = "chain"\nformats = ["*"]\ninputs = ["in"]\ntask_mb = 0.25\n'
MODEL_OPTIONS = {
    "label": 'model = "m"\n',
    "sample": 'model = "m"\njudge_model = "j"\n',
    "eval": 'model = "m"\njudge_model = "j"\nendpoint = "http://127.0.0.1:9/v1"\njudge_endpoint = "http://127.0.0.1:9/v1"\n',
}


def test_every_stage_can_be_named_in_a_definition_with_its_options_and_resources_checked():
    assert set(STAGES) == {"migrate", "validate", "label", "sample", "dedup", "export", "eval"}
    for name, stage in STAGES.items():
        table = f"[stage_options.{name}]\n{MODEL_OPTIONS[name]}" if name in MODEL_OPTIONS else ""
        defn = parse(name, HEAD + f'stages = ["ingest", "{name}"]\n' + table)
        assert defn.stages == ["ingest", name] and defn.resources(name) == stage.resources
        assert stage.reads in ("parts", "records")
    assert STAGES["eval"].reads == "records" and STAGES["validate"].reads == "parts"
    gpu = parse("g", HEAD + 'stages = ["ingest", "validate"]\n[stage_resources.validate]\ngpus = 1\nmemory_mb = 2048\n')
    assert gpu.resources("validate") == Resources(cpus=1, gpus=1, memory_mb=2048)
    assert gpu.resources("ingest") == resources_for("ingest")
    assert Resources(cpus=2, gpus=0.5, memory_mb=512).ray_options() == {"num_cpus": 2, "num_gpus": 0.5,
                                                                          "memory": 512 << 20}
    wrong = {
        'stages = ["ingest", "eval"]\n[stage_options.eval]\nmodel = "m"\n': r"stage_options\.eval: 'judge_model' is required",
        'stages = ["ingest", "eval"]\n[stage_options.eval]\n' + MODEL_OPTIONS["eval"] + "temprature = 1\n":
            r"stage_options\.eval: unknown option temprature",
        'stages = ["ingest", "migrate"]\n[stage_options.migrate]\nx = 1\n': "takes no options",
        'stages = ["ingest", "validate"]\n[stage_resources.validate]\ngpu = 1\n':
            r"stage_resources\.validate: unknown key gpu \(known: cpus, gpus, memory_mb\)",
        'stages = ["ingest", "validate"]\n[stage_resources.validate]\ncpus = -1\n': r"cpus: a number >= 0",
        'stages = ["ingest", "validate"]\n[stage_resources.dedup]\ncpus = 1\n': "names a stage the pipeline does not",
    }
    for text, message in wrong.items():
        with pytest.raises(DefinitionError, match=message):
            parse("wrong", HEAD + text)


def _world(messages: list[dict]) -> str:
    return "**Environment Observation:**\nPRED"


def _chain_definition(tmp_path, url: str, stages: str, extra: str = "") -> definition.Definition:
    inputs = tmp_path / "in"
    for sub in ("android", "mcp"):
        shutil.copytree(SAMPLES / sub, inputs / sub)
    path = tmp_path / "chain.toml"
    path.write_text(HEAD + f"stages = {stages}\n" + f"""
[stage_options.export]
kind = "sft"
split_ratios = [0.0, 0.0, 1.0]
""" + (f"""
[stage_options.eval]
endpoint = "{url}"
model = "wm"
judge_endpoint = "{url}"
judge_model = "judge"
split_ratios = [0.0, 0.0, 1.0]
per_domain = 2
""" if "eval" in stages else "") + extra)
    return definition.load(str(path))  # a definition file of the user's, inputs relative to it


def test_a_definition_runs_ingest_validate_dedup_export_eval_end_to_end(tmp_path):
    server = ScriptedJudgeAndWorld(_world, lambda p, t, a: verdict_text(all_scores(4)))
    try:
        defn = _chain_definition(tmp_path, server.url, '["ingest", "validate", "dedup", "export", "eval"]')
        lake, lines = str(tmp_path / "lake"), []
        result = run_ingest(defn, lake, progress=False, log=lines.append, executor="local")
        assert result.status == "success", result.messages
        assert [s.split(":")[0] for s in result.stage_summaries] == ["validate", "dedup", "export", "eval"]
        with open_catalog(Lake(lake), read_only=True) as cat:
            stages = cat.sql(f"SELECT stage FROM stage_stats WHERE run_id = '{result.run_id}' ORDER BY rowid").fetchall()
            evals = cat.sql("SELECT dataset, samples, valid, failed, overall, run_id FROM evals").fetchall()
            exported = cat.sql("SELECT count(*) FROM exports").fetchone()[0]
        assert [r[0] for r in stages] == ["ingest", "validate", "dedup", "export", "eval"]
        assert exported == 1  # the export stage's: eval takes its samples from the render stream, writes no export
        (dataset, samples, valid, failed, overall, run_id), = evals
        assert (dataset, run_id, failed) == ("chain", result.run_id, 0)
        assert samples == valid == server.world_requests == server.judge_requests == 4  # 2 per domain, 2 domains
        assert overall == 75.0  # every dimension 4 of 5: (4 - 1) / 4 x 100
        assert re.fullmatch(r"eval: eval [0-9a-f]{16}: overall 75\.00", result.stage_summaries[-1])
    finally:
        server.close()


def test_on_ray_each_stage_asks_for_its_declared_resources_and_gets_them(tmp_path):
    """A local Ray with one declared GPU: validate declared to need it gets GPU 1 on each task; ingest, dedup and
    export ask for and get CPUs only."""
    import ray

    defn = _chain_definition(tmp_path, "http://127.0.0.1:9/v1", '["ingest", "validate", "dedup", "export"]',
                             "\n[stage_resources.validate]\ngpus = 1\n\n[stage_resources.export]\ncpus = 0.5\n")
    lines: list[str] = []
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, logging_level="ERROR", log_to_driver=False,
             configure_logging=False, _node_ip_address="127.0.0.1")
    try:
        result = run_ingest(defn, str(tmp_path / "lake"), progress=False, log=lines.append, executor="ray")
    finally:
        ray.shutdown()
    assert result.status == "success" and result.executor == "ray", result.messages
    placed = {m.group(1): m for m in (re.match(r"  (\w+) chain(?: signatures)?: (\d+) (?:part group|task)s on Ray, "
                                              r"each asking (.*), given (.*); nodes (\S+) \((\d+)\)$", line)
                                     for line in lines) if m}
    placed.update({"export": m for m in (re.match(r"  (export) sft/agentworld: (\d+) part groups on Ray, each asking "
                                                  r"(.*), given (.*); nodes (\S+) \((\d+)\)$", line)
                                         for line in lines) if m})
    assert set(placed) == {"ingest", "validate", "dedup", "export"}, lines
    asked = {stage: (m.group(3), m.group(4)) for stage, m in placed.items()}
    assert asked["validate"] == ("CPU 1, GPU 1, memory 1,024 MB", "CPU 1, GPU 1")
    assert asked["ingest"] == asked["dedup"] == ("CPU 1, memory 1,024 MB", "CPU 1")
    assert asked["export"] == ("CPU 0.5, memory 1,024 MB", "CPU 0.5")
    assert all(int(m.group(2)) == int(m.group(6)) > 0 for m in placed.values())  # every task on the one node


def test_eval_and_the_sampler_read_the_records_export_writes_without_writing_any(all_lake_copy, tmp_path):
    """Render once, write many: eval's samples and the sampler's queries are the records `export` writes for
    the same options, taken from the render stream; neither leaves a file in the lake."""
    import os

    import orjson

    from pipelines.stages.export import export
    from pipelines.infra.options import ExportOptions
    from pipelines.stages.eval import EvalOptions, dataset_samples, read_bench
    from pipelines.stages.sample import SampleOptions, export_queries

    lake, lines = Lake(all_lake_copy), []
    before = sorted(os.listdir(all_lake_copy))
    ratios = (0.5, 0.0, 0.5)
    samples, described = dataset_samples(lake, None, "all", EvalOptions(model="m", judge_model="j", split_ratios=ratios),
                                         lines.append)
    assert sorted(os.listdir(all_lake_copy)) == before  # nothing written to be read back
    export(lake, None, "all", str(tmp_path / "bench"), ExportOptions(kind="sft", format="bench", split_ratios=ratios),
           log=lines.append)
    written = read_bench(str(tmp_path / "bench"), "test")
    assert samples == written and len(written) > 10
    assert described["dataset"] == "all" and "rendered as AgentWorldBench records" in lines[0]

    queries, version = export_queries(lake, None, "all", SampleOptions(model="m", judge_model="j", split_ratios=ratios),
                                      lines.append)
    export(lake, None, "all", str(tmp_path / "sft"), ExportOptions(kind="sft", split_ratios=ratios), log=lines.append)
    train = [orjson.loads(line) for path in sorted((tmp_path / "sft" / "train").glob("*.jsonl"))
             for line in path.read_bytes().splitlines()]
    assert [(q.step_id, q.domain, q.messages, q.real) for q in queries] == [
        (r["id"], r["domain"], r["messages"][:-1], r["messages"][-1]["content"]) for r in train] != []
    assert version.dataset == "all"
    assert not {"evals", "samples"} & set(os.listdir(all_lake_copy))  # where the two wrote their exports before
