"""Export pieces at their edges: the ms-swift CPT record's roles and loss flags, CPT windows of an empty
line, held-out matching, and the tokenizer counter's name and missing-package error."""

import builtins
import hashlib

import pytest

from tests.parts import require_module
from tests.transforms.export.test_transitions import _steps, _trajectories
from transforms.export import cpt, splits
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer


def _renderer():
    (main,) = _trajectories(_steps())
    return TrajectoryRenderer(main, TokenCounter())


def test_swift_cpt_puts_the_loss_on_observations_only():
    renderer = _renderer()
    messages = cpt.swift_record(renderer, 0, 3)["messages"]
    assert [(m["role"], m["loss"]) for m in messages] == [
        ("system", False), ("user", False), ("assistant", True), ("user", False), ("assistant", True),
        ("user", False), ("assistant", True)]
    assert all(set(m) == {"role", "content", "loss"} for m in messages)
    assert messages[0]["content"] == renderer.system
    assert messages[-1]["content"] == renderer.assistants[2] and messages[-1]["content"].endswith("bye")


def test_an_empty_line_makes_no_cpt_window():
    renderer = _renderer()
    assert cpt.windows(renderer, 0, None, with_system=False) == ([], 0)
    assert cpt.windows(renderer, 1, None, with_system=True) == ([(0, 1)], 0)


def test_held_out_needs_a_match_and_a_missing_task_matches_nothing():
    assert not splits.is_held_out({"x"}, "e1", None, "terminal:task=y")
    assert not splits.is_held_out({"x"}, "e1", "y", "terminal:task=y")
    assert splits.is_held_out({"x=y"}, "e1", None, "terminal:task=x=y")  # the value after the first `=`
    assert splits.is_held_out({"terminal:task=x=y"}, "e1", None, "terminal:task=x=y")
    assert not splits.is_held_out({"y"}, "e1", None, "terminal:task=x=y")


def test_a_tokenizer_counter_is_named_by_its_files_digest(tmp_path):
    tokenizers = require_module("tokenizers")
    from tokenizers import models, pre_tokenizers

    tok = tokenizers.Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    counter = TokenCounter(str(path))
    assert counter.name == f"tokenizer.json sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"


def test_a_tokenizer_without_the_package_says_what_to_install(tmp_path, monkeypatch):
    real_import = builtins.__import__

    def no_tokenizers(name, *args, **kwargs):
        if name == "tokenizers":
            raise ImportError("No module named 'tokenizers'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tokenizers)
    with pytest.raises(RuntimeError, match=r"^--tokenizer needs the `tokenizers` package: pip install "
                                           r"'trajforge\[export\]'$"):
        TokenCounter(str(tmp_path / "tokenizer.json"))
