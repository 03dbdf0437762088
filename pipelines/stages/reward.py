"""The world-model reward verl calls: `compute_score(data_source, solution_str, ground_truth, extra_info)`.

verl loads this file by path (`reward.custom_reward_function.path` in the fragment `pipelines export rl`
writes; `custom_reward_function.path` for verl before 0.8) in its reward workers, where neither the lake nor
the `pipelines` command exists: the file needs the project's `transforms` and the labeler's client
(`pipelines.infra.label_client`, `pipelines.stages.judge`: orjson and aiohttp), nothing else.

The reward of one rollout, in [0, 1], is the hybrid of the technical report (`transforms.reward.scores.hybrid`):
- rule part (`transforms.reward.rules.rule_score`): the answer read as the reference evaluation reads it
  (any form its parser reads: a `<predicted_observation>` block, closed or not, the marker form, a bare
  answer), against the anchors the real next state makes checkable, after masking volatile values; the
  domain's answer form is one weighted part of it (`form_weight`, 0 by default, as the reference's
  evaluation reads every form alike);
- rubric part: the domain's AgentWorldBench judge on an OpenAI-compatible endpoint, with the reference's judge
  input: the history as its Context section (`extra_info["judge_context"]`, which `pipelines export rl`
  writes, or `extra_info["judge_history"]`, (user turn, assistant turn) pairs), the current turn
  (`extra_info["current_prompt"]`), the parsed prediction and the real state; up to 3 attempts,
  (total - 1) / 4; a sample the judge fails on scores 0 here and is counted (`judge_failed`, and `STATS` in
  the process);
- weighted 9 : 1 (`weights`). Without a judge endpoint the reward is the rule part alone (`judge_used` 0).
- an output with no answer at all (empty, or nothing but reasoning: the reference's "No model generation" /
  "No output") scores 0 without a judge call (`no_answer`); every answer is judged, whatever its form.

Settings, each a keyword (the fragment's `reward_kwargs`, which verl passes to every call) or else an
environment variable: judge_endpoint (TRAJFORGE_JUDGE_ENDPOINT), judge_model (TRAJFORGE_JUDGE_MODEL),
judge_api_key (TRAJFORGE_JUDGE_API_KEY), judge_timeout seconds per attempt (TRAJFORGE_JUDGE_TIMEOUT, 600),
judge_retries on transport errors (TRAJFORGE_JUDGE_RETRIES, 4), judge_attempts (TRAJFORGE_JUDGE_ATTEMPTS, 3),
judge_concurrency per process (TRAJFORGE_JUDGE_CONCURRENCY, 16), judge_max_tokens (TRAJFORGE_JUDGE_MAX_TOKENS,
32768), judge_temperature (TRAJFORGE_JUDGE_TEMPERATURE, 0.6), cache_dir (TRAJFORGE_JUDGE_CACHE, default
~/.cache/trajforge/judge; "" turns the cache off), weights "RUBRIC,RULE" (TRAJFORGE_REWARD_WEIGHTS, 9,1),
form_weight, the answer form's share of the rule part, 0..1 (TRAJFORGE_REWARD_FORM_WEIGHT, 0).
`extra_info["reward_options"]` (a dict of the same keys) overrides both for one sample.

The result is a dict (verl's reward managers take `score` as the reward and log the other keys): score, rule,
rubric, judge_used, judge_failed, and the five judge dimensions (0 when not judged). Every call returns the
same keys, as verl's batching needs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections import Counter
from pathlib import Path

if importlib.util.find_spec("transforms") is None:  # loaded by path from a checkout: its packages are beside
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pipelines.infra.label_client import ClientConfig, Sampling  # noqa: E402
from pipelines.stages.judge import DirectoryCache, JudgeJob, judge_all  # noqa: E402
from transforms.label.parse import reference_answer  # noqa: E402
from transforms.reward.judge import SCORE_DIMENSIONS, judge_messages  # noqa: E402
from transforms.reward.rules import RuleOptions, rule_score  # noqa: E402
from transforms.reward.scores import hybrid  # noqa: E402

DATA_SOURCE_PREFIX = "trajforge/"
# settings: name -> (environment variable, default, type)
SETTINGS = {
    "judge_endpoint": ("TRAJFORGE_JUDGE_ENDPOINT", "", str),
    "judge_model": ("TRAJFORGE_JUDGE_MODEL", "", str),
    "judge_api_key": ("TRAJFORGE_JUDGE_API_KEY", "", str),
    "judge_timeout": ("TRAJFORGE_JUDGE_TIMEOUT", 600.0, float),
    "judge_retries": ("TRAJFORGE_JUDGE_RETRIES", 4, int),
    "judge_attempts": ("TRAJFORGE_JUDGE_ATTEMPTS", 3, int),
    "judge_concurrency": ("TRAJFORGE_JUDGE_CONCURRENCY", 16, int),
    "judge_max_tokens": ("TRAJFORGE_JUDGE_MAX_TOKENS", 32768, int),
    "judge_temperature": ("TRAJFORGE_JUDGE_TEMPERATURE", 0.6, float),
    "cache_dir": ("TRAJFORGE_JUDGE_CACHE", str(Path.home() / ".cache" / "trajforge" / "judge"), str),
    "weights": ("TRAJFORGE_REWARD_WEIGHTS", "9,1", str),
    "form_weight": ("TRAJFORGE_REWARD_FORM_WEIGHT", 0.0, float),
}
# keywords verl's reward managers may pass that are not ours
_VERL_KEYWORDS = frozenset({"reward_router_address", "reward_model_tokenizer"})
STATS: Counter = Counter()  # judged, judge_failed, rule_only, no_answer: this process's counts
_SEMAPHORES: dict[int, threading.BoundedSemaphore] = {}
_LOCK = threading.Lock()


def settings(kwargs: dict, extra_info: dict | None = None) -> dict:
    """The effective settings: extra_info["reward_options"] > keywords > environment > defaults. Raises
    TypeError naming an unknown keyword, ValueError naming a bad value."""
    unknown = set(kwargs) - set(SETTINGS) - _VERL_KEYWORDS
    if unknown:
        raise TypeError(f"compute_score: unknown setting(s) {sorted(unknown)} (known: {', '.join(SETTINGS)})")
    per_sample = (extra_info or {}).get("reward_options") or {}
    out = {}
    for name, (variable, default, kind) in SETTINGS.items():
        value = per_sample.get(name, kwargs.get(name, os.environ.get(variable, default)))
        try:
            out[name] = kind(value)
        except (TypeError, ValueError):
            raise ValueError(f"compute_score: {name} (or ${variable}) = {value!r} is not a {kind.__name__}") from None
    try:
        rubric, rule = (float(x) for x in str(out["weights"]).split(","))
    except ValueError:
        raise ValueError(f"compute_score: weights = {out['weights']!r} is not RUBRIC,RULE (e.g. 9,1)") from None
    out["weights"] = (rubric, rule)
    if not 0.0 <= out["form_weight"] <= 1.0:
        raise ValueError(f"compute_score: form_weight = {out['form_weight']} is not within 0..1")
    return out


def domain_of(data_source: str) -> str:
    from transforms.agentworld import DOMAINS

    domain = data_source[len(DATA_SOURCE_PREFIX):] if data_source.startswith(DATA_SOURCE_PREFIX) else data_source
    if domain not in DOMAINS:
        raise ValueError(f"compute_score: data_source {data_source!r} is not trajforge/<domain> "
                         f"({', '.join(DOMAINS)})")
    return domain


def _semaphore(n: int) -> threading.BoundedSemaphore:
    with _LOCK:
        return _SEMAPHORES.setdefault(n, threading.BoundedSemaphore(max(1, n)))


def _judge(domain: str, solution: str, ground_truth: str, extra_info: dict, s: dict):
    """The judge's outcome for one rollout (`pipelines.stages.judge.JudgeOutcome`)."""
    context = extra_info.get("judge_context")
    history = context if isinstance(context, str) else [tuple(pair) for pair in extra_info.get("judge_history") or []]
    messages = judge_messages(domain, history, extra_info.get("current_prompt") or "",
                              reference_answer(solution), ground_truth)
    sampling = Sampling(temperature=s["judge_temperature"], top_p=None, top_k=None, max_tokens=s["judge_max_tokens"])
    config = ClientConfig(s["judge_endpoint"], s["judge_model"], sampling, concurrency=1, timeout_s=s["judge_timeout"],
                          retries=s["judge_retries"], api_key=s["judge_api_key"] or None)
    cache = DirectoryCache(s["cache_dir"]) if s["cache_dir"] else None
    with _semaphore(s["judge_concurrency"]):
        outcomes = judge_all(config, [JudgeJob("sample", domain, messages)],
                             cache.lookup if cache else (lambda keys: {}),
                             cache.record if cache else (lambda row: None), attempts=s["judge_attempts"])
    return outcomes["sample"]


def compute_score(data_source: str, solution_str: str, ground_truth: str, extra_info: dict | None = None,
                  **kwargs) -> dict:
    """The reward of one rollout (module docstring). Raises ValueError for a data source that is not ours or
    a bad setting; a judge that fails never raises (the sample's rubric part is 0)."""
    extra_info = dict(extra_info or {})
    s = settings(kwargs, extra_info)
    domain = domain_of(data_source)
    checked = rule_score(domain, solution_str, ground_truth, RuleOptions(form_weight=s["form_weight"]))
    rule = checked.score
    result = {"score": 0.0, "rule": rule, "rubric": 0.0, "judge_used": 0, "judge_failed": 0,
              **dict.fromkeys(SCORE_DIMENSIONS, 0)}
    if not checked.answered:  # nothing to judge: the reference fails it, or judges "No output"
        STATS["no_answer"] += 1
        return result
    if not (s["judge_endpoint"] and s["judge_model"]) or s["weights"][0] == 0:
        STATS["rule_only"] += 1
        result["score"] = hybrid(None, rule, (0.0, 1.0))
        return result
    result["judge_used"] = 1
    outcome = _judge(domain, solution_str, ground_truth, extra_info, s)
    if not outcome.verdict.success:
        STATS["judge_failed"] += 1
        result["judge_failed"] = 1
        total = None
    else:
        STATS["judged"] += 1
        total = outcome.verdict.total_score
        result.update(outcome.verdict.scores)
        result["rubric"] = max(0.0, (total - 1) / 4) if total else 0.0
    result["score"] = hybrid(total, rule, s["weights"])
    return result
