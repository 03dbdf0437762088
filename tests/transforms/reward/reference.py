"""The reference AgentWorldBench evaluation (Qwen-AgentWorld `eval/`, copied unmodified into `reference_eval/`),
imported for the tests as the oracle of our judge input, verdict parser and score table."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
from pathlib import Path

from tests.parts import require_module

HERE = Path(__file__).resolve().parent / "reference_eval"


def load():
    """The reference's `eval.py` module (it imports `openai`, a test dependency, and `lwm_eval_utils`)."""
    require_module("openai", "pip install -e '.[test]' installs it")
    if "reference_eval_script" in sys.modules:
        return sys.modules["reference_eval_script"]
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    spec = importlib.util.spec_from_file_location("reference_eval_script", HERE / "eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["reference_eval_script"] = module
    spec.loader.exec_module(module)
    return module


def parse_judge_output(raw: str) -> dict:
    load()
    from lwm_eval_utils import parse_judge_output as parse

    return parse(raw, response_tag="final_evaluation")


def parse_model_output(raw: str) -> str:
    load()
    from lwm_eval_utils import parse_model_output as parse

    return parse(raw, "predicted_observation")


def aggregate_printout(jobs: list[dict]) -> str:
    """What the reference's `aggregate_scores` prints for `jobs`."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        load().aggregate_scores(jobs)
    return out.getvalue()


def printed_table(text: str) -> dict:
    """The numbers of an `aggregate_scores` printout: per domain (lower-cased display name) its valid, samples,
    failed and each printed dimension; `overall`; `totals` (samples, valid, failed); `order`, the domains in
    the order printed."""
    out, domain = {"order": []}, None
    for line in text.splitlines():
        if m := re.match(r"--- (\w+) \((\d+)/(\d+) valid, (\d+) failed\) ---", line):
            domain = m.group(1).lower()
            out["order"].append(domain)
            out[domain] = {"valid": int(m.group(2)), "samples": int(m.group(3)), "failed": int(m.group(4))}
        elif m := re.match(r"\s+(\w+): (-?[\d.]+)$", line):
            out[domain][m.group(1)] = float(m.group(2))
        elif m := re.match(r"Overall: (-?[\d.]+)", line):
            out["overall"] = float(m.group(1))
        elif m := re.match(r"Total samples: (\d+), Valid: (\d+), Failed: (\d+)", line):
            out["totals"] = tuple(int(x) for x in m.groups())
    return out
