"""A scripted stand-in for a world model and an LLM judge behind one OpenAI-compatible loopback server (named as
such: it gives chosen verdicts, so scores can be checked exactly; the real llama.cpp server is used beside it).

A request whose last message is a judge input (`transforms.reward.judge.judge_messages`) is answered by
`verdict(prediction, truth, attempt)` (the judge's raw text; `attempt` counts this sample's judge requests);
any other request is answered by `world(messages)` (the world model's raw text).
"""

from __future__ import annotations

import json
import threading
from typing import Callable

from tests.pipelines.label_servers import ScriptedServer, chat_completion
from transforms.agentworld import DOMAINS, system_prompt

PREDICTED = "**World Model Output (Simulated):**\n```\n"
TRUTH = "**Ground Truth (Real Output):**\n```\n"


def verdict_text(scores: dict | None, *, fenced: bool = True, tag: bool = True, reasoning: str = "Looks close.") -> str:
    """A judge answer in the reference's requested form; `scores` None gives an answer with no JSON at all."""
    if scores is None:
        return f"<think>{reasoning}</think>I cannot decide."
    body = json.dumps({"strengths": ["s"], "weaknesses": ["w"], "scores": scores}, indent=2)
    if fenced:
        body = f"```json\n{body}\n```"
    return f"<think>{reasoning}</think>\n" + (f"<final_evaluation>\n{body}\n</final_evaluation>" if tag else body)


def all_scores(n: int) -> dict:
    return {d: n for d in ("format", "factuality", "consistency", "realism", "quality")}


def judged_parts(user: str) -> tuple[str, str]:
    """(prediction, truth) as the judge input shows them."""
    prediction = user.split(PREDICTED, 1)[1].split("\n```\n\n" + TRUTH, 1)[0]
    truth = user.split(TRUTH, 1)[1].split("\n```\n\nPlease evaluate", 1)[0]
    return prediction, truth


class ScriptedJudgeAndWorld:
    def __init__(self, world: Callable[[list[dict]], str], verdict: Callable[[str, str, int], str],
                 delay_s: float = 0.0):
        self.world, self.verdict, self.delay_s = world, verdict, delay_s
        self.attempts: dict[str, int] = {}
        self.judge_requests = self.world_requests = 0
        self.lock = threading.Lock()
        self.server = ScriptedServer([self._answer])
        self.url = self.server.url

    def _answer(self, body: dict):
        user = body["messages"][-1]["content"]
        if PREDICTED in user:
            prediction, truth = judged_parts(user)
            with self.lock:
                self.judge_requests += 1
                self.attempts[user] = attempt = self.attempts.get(user, 0) + 1
            return 200, chat_completion(self.verdict(prediction, truth, attempt)), self.delay_s
        with self.lock:
            self.world_requests += 1
        return 200, chat_completion(self.world(body["messages"])), self.delay_s

    def close(self) -> None:
        self.server.close()


def request_domain(messages: list[dict]) -> str:
    """The domain whose system prompt opens a request's messages."""
    head = messages[0]["content"][:300]
    return next(d for d in DOMAINS if system_prompt(d)[:300] == head)
