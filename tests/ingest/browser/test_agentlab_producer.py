"""AgentLab in the loop, at two releases whose step pickles differ: agentlab 0.3.2 (BrowserGym 0.13's
`browsergym.experiments.loop.StepInfo`) and 0.4.2 (its own `agentlab.experiments.loop.StepInfo`), each in its
venv (`make parts`). Each runs one experiment per test session (tests/ingest/browser/
agentlab_producer.py): a scripted agent types a name, waits and presses Greet on a loopback page in Debian's
chromium; the open-ended task, checked against the page, ends it with reward 1. Every step pickle holds
AgentLab's `AgentInfo` and the `Discussion` of chat messages GenericAgent records.

The oracle is the producer's own loader: `ExpResult(exp_dir).steps_info` in the producer's venv. What we
ingest must say, step by step, what it reads: the action, the page, the reasoning, and the reward and
`terminated` flag the next StepInfo records for it (BrowserGym's StepInfo t+1 holds the result of action t).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ingest import golden
from tests.ingest.browser.producers import CHROMIUM, REPO, site
from tests.parts import require

VERSIONS = ("0.3.2", "0.4.2")
PRODUCER = Path(__file__).with_name("agentlab_producer.py")
VENVS = REPO / ".venv" / "producers"
TIKTOKEN_CACHE = VENVS / "tiktoken-cache"  # cl100k_base from the litellm wheel (Makefile: TIKTOKEN_CACHE)


def _python(version: str) -> Path:
    return VENVS / f"agentlab-{version}" / "bin" / "python"


def _producer(version: str, *args: str) -> dict:
    # offline: tiktoken reads the bundled encoding, litellm (imported by agentlab 0.4's chat_api) its own cost map
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(TIKTOKEN_CACHE), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([str(_python(version)), str(PRODUCER), *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=str(PRODUCER.parent))
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"agentlab {version} {args[0]} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def agentlab_runs(tmp_path_factory) -> dict[str, tuple[Path, dict] | Exception]:
    """Each installed version's experiment folder and what its own loader reads from it, written once a
    session: {version: (exp_dir, oracle)} (or the error the producer gave)."""
    runs: dict[str, tuple[Path, dict] | Exception] = {}
    if not Path(CHROMIUM).exists():
        return runs
    with site() as base:
        for version in VERSIONS:
            if not (_python(version).parent.parent / ".installed").exists():  # the Makefile's mark: venv complete
                continue
            try:
                written = _producer(version, "write", str(tmp_path_factory.mktemp(f"agentlab-{version}")),
                                    f"{base}/index.html")
                runs[version] = (Path(written["exp_dir"]), written["oracle"])
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                runs[version] = e
    return runs


@pytest.mark.parametrize("version", VERSIONS)
def test_every_step_agentlab_writes_is_ingested_as_its_own_loader_reads_it(version, agentlab_runs, run, query):
    require(f"agentlab {version} (its producer venv) and Debian's chromium", version in agentlab_runs,
            "make parts; apt-get install chromium")
    produced = agentlab_runs[version]
    if isinstance(produced, Exception):
        raise produced
    exp_dir, oracle = produced
    infos = oracle["steps"]
    loop = "browsergym.experiments.loop" if version.startswith("0.3") else "agentlab.experiments.loop"
    assert oracle["loop"] == loop  # the two releases really pickle different StepInfo classes
    acted = [s for s in infos if s["action"] is not None]
    assert len(acted) == 3 and infos[-1]["action"] is None  # fill, noop, click; the last StepInfo observes
    assert {s["agent_info_class"] for s in acted} == {"browsergym.experiments.agent.AgentInfo"}
    assert acted[0]["chat_class"] == "Discussion" and acted[0]["chat_classes"] == [
        "agentlab.llm.llm_utils.AIMessage", "agentlab.llm.llm_utils.HumanMessage",
        "agentlab.llm.llm_utils.SystemMessage"]

    result = run("ingest-browser", [exp_dir])
    assert result.status == "success" and result.episodes == 1 and result.quarantined == 0
    assert result.steps == len(acted)
    golden.check_counted(Path(__file__).with_name("golden") / "agentlab-greeter.json", query)
    steps = query("SELECT * FROM steps ORDER BY step_index")
    for t, (step, info) in enumerate(zip(steps, acted)):
        after = infos[t + 1]  # what the environment recorded once action t ran
        assert step["action"]["code"] == info["action"]
        assert step["reward"] == after["reward"]
        assert step["is_terminal"] == bool(after["terminated"] and t == len(acted) - 1)
        assert step["observation"]["url"] == info["url"]
        assert info["axtree_txt"] in step["observation"]["text"]
        assert step["reasoning"] == info["think"]
    assert [s["action"]["kind"] for s in steps] == ["type", "wait", "click"]
    assert steps[-1]["reward"] == 1.0 and steps[-1]["is_terminal"] and infos[-1]["terminated"]
    assert steps[-1]["final_observation"]["url"] == infos[-1]["url"]

    ep = query("SELECT * FROM episodes")[0]
    summary = oracle["summary"]
    assert (ep["outcome"], ep["reward"]) == ("success", summary["cum_reward"]) and summary["terminated"]
    assert ep["agent"] == "scripted/no-model" and ep["task"].startswith("Greet Ada")
    env = json.loads(ep["env"])
    assert env["agentlab_version"] == version
    # exp_args.pkl names the user's own agent-args class (a script's __main__): kept as its state, and said
    assert [w["reason"] for w in env["ingest_warnings"]] == [
        "exp_args.pkl holds __main__.ScriptedAgentArgs, a class this reader does not list: kept as the record "
        "of its state"]


if __name__ == "__main__":  # a folder to look at: python -m tests.ingest.browser.test_agentlab_producer VERSION OUT
    with site() as base:
        print(_producer(sys.argv[1], "write", sys.argv[2], f"{base}/index.html"))
