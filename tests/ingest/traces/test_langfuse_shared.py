"""The Langfuse reader on a real export of a second repository, read where ../shared lays it (no license: never
copied here); its golden keeps a hash and the opening of each text only.

BlackMamba97s/AgOps @ 09325cfcc505743c1337244c2218bf0cecb0625d, `langfuse_pattern_recognition_tests/langfuse_test_v2.json`
-> ../shared/samples/traces/langfuse/agops-clustervigil/langfuse_test_v2.json: the repository's own trace browser
(`test_pattern_recognition/langfuse_trace_browser_extended.py`) wrote 36 traces of a Langfuse project as
`[{trace, observations, stepSequence}]`, each observation the API's fields with the ones it does not list moved under
`raw` (the generation's `model` among them). 18 `experiment-item-run` traces (a dataset experiment's item spans, one
observation each, no model or tool span) and 18 `root-agent-span` traces of ClusterVigil, a LangChain tools agent
(`AgentExecutor`, Azure gpt-4o, one `KubernetesSme` retrieval tool) traced by Langfuse's LangChain handler
(langfuse-sdk 3.9.1), which types the agent's `RunnableAssign<agent_scratchpad>`, `RunnableParallel<...>` and
`OpenAIToolsAgentOutputParser` runnables `AGENT`."""

import collections
import json

from ingest.record import Episode, Rejected
from ingest.traces import langfuse
from tests.ingest import golden
from tests.ingest.golden import read_records
from tests.ingest.traces.read_util import claims
from tests.parts import SHARED, require_shared_sample

GOLDEN = golden.Path(__file__).parent / "golden"
AGOPS = SHARED / "samples" / "traces" / "langfuse" / "agops-clustervigil" / "langfuse_test_v2.json"


def test_a_langchain_agent_traced_by_langfuse_is_one_episode_per_run_not_one_per_runnable_typed_agent():
    """What a person counts: 18 agent runs (the `root-agent-span` traces), each one question (a jailbreak prompt
    around a Kubernetes question, the experiment's dataset) answered by gpt-4o: 8 call `KubernetesSme` once and then
    answer (2 steps), 10 answer at once (1 step): 26 steps, every run ended on its answer. The runnables typed
    `AGENT` beneath the executor are no agents of their own (they were 35 empty sub-episodes, each a quarantine row);
    the 18 experiment item traces hold no agent span (one row names them)."""
    path = require_shared_sample(AGOPS)
    assert claims(langfuse, path)
    records = read_records(langfuse, path)
    rows = [r for r in records if isinstance(r, Rejected)]
    assert [r.rule for r in rows] == ["no_agent_spans"] and rows[0].reason.startswith(
        "langfuse_test_v2.json: 18 of 36 traces hold no span of an agent")
    episodes = [r for r in records if isinstance(r, Episode)]
    raw = json.loads(path.read_text())
    agent_runs = [t for t in raw if t["trace"]["name"] == "root-agent-span"]
    assert sorted(e.key for e in episodes) == sorted(t["trace"]["id"] for t in agent_runs)
    for episode in episodes:
        [run] = [t for t in agent_runs if t["trace"]["id"] == episode.key]
        tools = [o for o in run["observations"] if o["type"] == "TOOL"]
        assert [s.action.tool_name for s in episode.steps[:-1]] == [o["name"] for o in tools]
        assert episode.steps[-1].action.kind == "message" and episode.terminated
        executor = next(o for o in run["observations"] if o["name"] == "AgentExecutor")
        assert episode.task == executor["input"]["input"]
        assert episode.steps[-1].action.text == executor["output"]["output"]
        assert "subagents" not in episode.env and episode.agent == "gpt-4o"
    assert collections.Counter(len(e.steps) for e in episodes) == {2: 8, 1: 10}
    golden.check(records, GOLDEN / "langfuse-agops-clustervigil.json", texts="hash")
