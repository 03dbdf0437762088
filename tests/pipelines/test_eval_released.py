"""`pipelines eval` on AgentWorldBench as released: a folder of `{domain}_test.jsonl` files, or the Parquet
files the dataset hub converts them to (`default/test/0000.parquet`...), read as the same records in the
same order, and evaluated to the same table."""

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines import cli
from pipelines.stages.eval import read_bench
from tests.conftest import SAMPLES
from tests.pipelines.judge_servers import ScriptedJudgeAndWorld, all_scores, verdict_text

RELEASED = SAMPLES / "agentworld" / "released" / "android_test.jsonl"
TERMINAL = SAMPLES / "agentworld" / "bench" / "terminal_test.jsonl"


def _records(*paths):
    return [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def released(tmp_path):
    """(the JSONL folder, the hub's Parquet folder of it) with an android and a terminal file; the Parquet one
    also has a train split that must not be read."""
    jsonl = tmp_path / "AgentWorldBench"
    jsonl.mkdir()
    shutil.copy(RELEASED, jsonl / "android_test.jsonl")
    shutil.copy(TERMINAL, jsonl / "terminal_test.jsonl")
    (jsonl / "README.md").write_text("card\n")
    hub = tmp_path / "parquet"
    (hub / "default" / "test").mkdir(parents=True)
    (hub / "default" / "train").mkdir(parents=True)
    records = _records(jsonl / "android_test.jsonl", jsonl / "terminal_test.jsonl")
    # the hub writes a split in size-bounded files, several row groups each
    pq.write_table(pa.Table.from_pylist(records[:4]), hub / "default" / "test" / "0000.parquet", row_group_size=3)
    pq.write_table(pa.Table.from_pylist(records[4:]), hub / "default" / "test" / "0001.parquet")
    pq.write_table(pa.Table.from_pylist(records[:1]), hub / "default" / "train" / "0000.parquet")
    return jsonl, hub


def test_the_jsonl_folder_and_its_parquet_are_the_same_records(released):
    jsonl, hub = released
    records = read_bench(str(jsonl), "test")
    assert len(records) == 7 and [(r["task"], r["id"], r["turn_idx"]) for r in records][:5] == [
        ("android", 68, 1), ("android", 68, 2), ("android", 68, 3), ("android", 2, 1), ("android", 2, 2)]
    assert read_bench(str(hub), "test") == records
    assert read_bench(str(hub / "default" / "test" / "0001.parquet"), "test") == records[4:]
    assert read_bench(str(hub), "train") == records[:1]


@pytest.mark.parametrize("name", ["agentworldbench-test.parquet", "test-00000-of-00001.parquet"])
def test_the_hubs_other_file_names_for_a_split(tmp_path, name):
    records = _records(RELEASED)
    pq.write_table(pa.Table.from_pylist(records), tmp_path / name)
    pq.write_table(pa.Table.from_pylist(records[:1]), tmp_path / name.replace("test", "validation"))
    assert read_bench(str(tmp_path), "test") == records


def test_a_parquet_file_of_other_records_is_refused_by_name(tmp_path):
    (tmp_path / "test").mkdir()
    pq.write_table(pa.table({"question": ["q"], "answer": ["a"]}), tmp_path / "test" / "0000.parquet")
    with pytest.raises(ValueError, match=r"0000\.parquet: not AgentWorldBench records \(no prompt column; "
                                         r"columns question, answer\)"):
        read_bench(str(tmp_path), "test")
    (tmp_path / "test" / "0000.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(ValueError, match=r"0000\.parquet: not a Parquet file"):
        read_bench(str(tmp_path), "test")


def _eval(source, lake, url) -> int:
    return cli.main(["eval", str(source), "--lake", lake, "--endpoint", url, "--model", "wm",
                     "--judge-endpoint", url, "--judge-model", "judge"])


def test_eval_gives_the_same_table_from_either(released, tmp_path, capsys):
    """Every line is a sample: 5 android and 2 terminal lines, judged 4 (android) and 2 (terminal)."""
    jsonl, hub = released
    world = lambda messages: "<predicted_observation>\nPRED\n</predicted_observation>"  # noqa: E731
    verdict = lambda prediction, truth, attempt: verdict_text(  # noqa: E731
        all_scores(2 if truth.startswith(("data.csv", "1201", "1200")) else 4))
    server = ScriptedJudgeAndWorld(world, verdict)
    try:
        tables = []
        for source in (jsonl, hub):
            assert _eval(source, str(tmp_path / f"lake-{source.name}"), server.url) == 0
            out = capsys.readouterr().out
            tables.append(out[out.index("AgentWorldBench scores"):].split("\n")[:5])
        assert tables[0] == tables[1]
        assert [line.split()[:3] + line.split()[-1:] for line in tables[0][2:4]] == [
            ["android", "5/5", "0", "75.00"], ["terminal", "2/2", "0", "25.00"]]
        assert tables[0][4] == "overall 60.71   samples 7, valid 7, failed 0"  # (5 x 75 + 2 x 25) / 7
    finally:
        server.close()
