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


class _Costs:
    """A STAND-IN renderer for `cpt.windows`, which reads only the system prompt's tokens and each turn's
    tokens in a window starting at `start` (a window's first turn also shows the state: +5 here)."""

    system_tokens = 10

    def __init__(self, costs):
        self.costs = costs

    def turn_tokens(self, i: int, start: int) -> int:
        return self.costs[i] + (5 if i == start else 0)


def test_cpt_windows_fill_the_budget_exactly_and_drop_turns_too_big_alone():
    r = _Costs([10, 10, 10, 10])
    # 15 + 10 + 10 + 10 = 45: an exact fit is kept whole; one token less starts a second window at turn 3
    assert cpt.windows(r, 4, 45, with_system=False) == ([(0, 4)], 0)
    assert cpt.windows(r, 4, 44, with_system=False) == ([(0, 3), (3, 4)], 0)
    # with the system prompt counted (10 more per window)
    assert cpt.windows(r, 4, 45, with_system=True) == ([(0, 3), (3, 4)], 0)
    assert cpt.windows(r, 4, 55, with_system=True) == ([(0, 4)], 0)
    # turns too big alone are dropped, counted, and the next window starts after them
    big = _Costs([10, 50, 10, 60, 10])
    assert cpt.windows(big, 5, 40, with_system=False) == ([(0, 1), (2, 3), (4, 5)], 2)
    assert cpt.windows(_Costs([50, 10]), 2, 40, with_system=False) == ([(1, 2)], 1)  # no empty window first
    assert cpt.windows(_Costs([10, 50]), 2, 40, with_system=False) == ([(0, 1)], 1)  # nor last
    assert cpt.windows(_Costs([35]), 1, 40, with_system=False) == ([(0, 1)], 0)  # 40 of 40 fits


def test_cpt_documents_show_no_task():  # the os prompt is one that shows a task in SFT records
    rows = _steps()
    import pyarrow as pa

    from schemas import STEPS
    from tests.transforms.export.lakes import episode_row
    from transforms.export.transitions import episode_index, trajectories

    episodes = episode_index(pa.Table.from_pylist([episode_row("e1", "os", "Fix the flaky build")]))
    (main,) = list(trajectories(pa.Table.from_pylist(rows, schema=STEPS), episodes))
    renderer = TrajectoryRenderer(main, TokenCounter())
    assert "Fix the flaky build" in renderer.users[0]  # SFT records show it
    assert "Fix the flaky build" not in cpt.text_record(renderer, 0, 3)["text"]
    assert all("Fix the flaky build" not in m["content"] for m in cpt.swift_record(renderer, 0, 3)["messages"][1:])


def test_group_keys_skip_empty_or_non_text_env_values_and_urls_outside_the_web():
    assert splits.group_key("android", "t", {"app_package": "", "repo": 5}, None, "e") == "android:task=t"
    assert splits.group_key("terminal", "t", {}, "https://a.example/", "e") == "terminal:task=t"
    assert splits.group_key("web", None, {}, "about:blank", "e") == "web:episode=e"  # a URL without a host
