"""Coding-agent CLIs in the loop: each installed from the npm registry (Aider: PyPI) at a pinned release into its
own prefix or venv (`.venv/producers/<name>-<version>/`, built by `make parts`), run non-interactively once per
test session with HOME in a temporary folder, in a temporary workspace, against the scripted model server
(`tests/scripted_model_server.py`), so that it writes its own session files there.

A run returns a `CliRun`: where the CLI wrote its sessions, the server (every request it answered, with the
tool results each carried), the script it played, the CLI's own output, and how long the run took.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO
from tests.parts import require
from tests.scripted_model_server import ScriptedModelServer, Turn, answers, call_id

PRODUCERS = REPO / ".venv" / "producers"
NOTES = "alpha\nbeta\n"  # the file the scripted agents list, read and copy


@dataclass
class CliRun:
    version: str
    home: Path  # the CLI's HOME: its session store is under it
    workspace: Path  # where the agent worked (realpath: the path the agent reports)
    server: ScriptedModelServer  # closed; its `requests` are the record of what the agent sent
    script: list[Turn]
    conversations: dict[str, list[Turn]] = field(default_factory=dict)
    stdout: str = ""
    seconds: float = 0.0
    sessions: list["CliSession"] = field(default_factory=list)  # a CLI run once per session (Aider): each one


@dataclass
class CliSession:
    """One invocation of a CLI that runs one prompt per process: its prompt, its server, its script."""

    prompt: str
    server: ScriptedModelServer
    script: list[Turn]


@dataclass
class Played:
    """One call the script made, and the result the agent sent back for it (None: never sent)."""

    name: str
    arguments: dict
    seen: str | None
    is_error: bool | None


def played(run: CliRun, script: int = 0) -> list[Played]:
    """The oracle: every call of script `script` in order, with the result the server received for it."""
    turns = run.script if script == 0 else list(run.conversations.values())[script - 1]
    requests = run.server.agent_requests(script)
    assert requests, f"the agent sent no request that script {script} answered"
    results = [r for request in requests for r in request.results]
    out = []
    for t, turn in enumerate(turns):
        for i, c in enumerate(turn.calls):
            issued = call_id(requests[0].protocol, t, i, script)
            result = next((r for r in results if answers(r, issued)), None)
            out.append(Played(c.name, c.arguments, result.output if result else None,
                              result.is_error if result else None))
    return out


_RUNS: dict[tuple[str, str], CliRun] = {}  # one run of each CLI release per test session, shared by the modules


def cli_run(name: str, version: str, tmp_path_factory) -> CliRun:
    """The run of CLI `name` ("claude-code", "codex", "gemini-cli", "qwen-code", "aider", "opencode", "cline",
    "cline-xml") at `version`, made once per test session."""
    if (name, version) not in _RUNS:
        runner = {"claude-code": claude_code_run, "codex": codex_run, "gemini-cli": gemini_cli_run,
                  "qwen-code": qwen_code_run, "aider": aider_run, "opencode": opencode_run, "cline": cline_run,
                  "cline-xml": cline_xml_run}[name]
        _RUNS[name, version] = runner(version, tmp_path_factory.mktemp(f"{name}-{version}"))
    return _RUNS[name, version]


def npm_cli(name: str, version: str, command: str) -> Path:
    """The CLI's executable in its prefix; skips (fails under CI) when `make parts` has not installed it."""
    prefix = PRODUCERS / f"{name}-{version}"
    require(f"{name} {version} (npm prefix {prefix})", (prefix / ".installed").exists(),
            "make parts (part of make setup-test) installs it")
    return prefix / "node_modules" / ".bin" / command


def venv_cli(name: str, version: str, command: str) -> Path:
    """The CLI's executable in its venv (a PyPI package); skips (fails under CI) when `make parts` has not
    installed it."""
    venv = PRODUCERS / f"{name}-{version}"
    require(f"{name} {version} (venv {venv})", (venv / ".installed").exists(),
            "make parts (part of make setup-test) installs it")
    return venv / "bin" / command


def workspace(base: Path) -> tuple[Path, Path]:
    """(home, workspace) under `base`: an empty HOME, and a workspace holding `notes.txt`."""
    home, work = base / "home", base / "work"
    home.mkdir(parents=True)
    work.mkdir(parents=True)
    (work / "notes.txt").write_text(NOTES)
    return home, work.resolve()


def run_cli(argv: list[str], env: dict, cwd: Path, timeout: float = 240) -> tuple[str, float]:
    """(stdout, seconds) of one CLI run; raises with its output when it fails. The environment is `env` over
    PATH and LANG alone: nothing of the real home or of any credential reaches the CLI."""
    base = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8"}
    start = time.monotonic()
    done = subprocess.run(argv, env={**base, **env}, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise AssertionError(f"{argv[0]} failed ({done.returncode}) after {seconds:.1f} s:\n"
                             f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout, seconds


# --- Claude Code ------------------------------------------------------------------------------------------------

CLAUDE_MODEL = "claude-sonnet-4-5"
CLAUDE_PROMPT = "Copy the notes into out.txt and check for a missing file."
SUBAGENT_PROMPT = "Count the lines of notes.txt."


def claude_code_script(work: Path) -> tuple[list[Turn], dict[str, list[Turn]]]:
    """The main script (list the workspace, read a file, write one, a command that fails, a synchronous
    subagent, the answer) and the subagent's (one command, its answer)."""
    from tests.scripted_model_server import answer, call

    main = [call("Bash", command="ls", description="List the files"),
            call("Read", file_path=str(work / "notes.txt")),
            call("Write", file_path=str(work / "out.txt"), content=NOTES),
            call("Bash", command="cat missing.txt", description="Show the missing file"),
            call("Agent", description="Count lines", prompt=SUBAGENT_PROMPT, subagent_type="general-purpose",
                 run_in_background=False),
            answer("Copied notes.txt to out.txt; missing.txt does not exist.")]
    sub = [call("Bash", command="wc -l notes.txt", description="Count the lines"), answer("notes.txt has 2 lines.")]
    return main, {SUBAGENT_PROMPT: sub}


def claude_code_run(version: str, base: Path) -> CliRun:
    """`claude -p` of Claude Code `version` in a fresh HOME and workspace under `base`, against the scripted
    server (`ANTHROPIC_BASE_URL`), every tool allowed without a prompt; it writes
    `HOME/.claude/projects/<project>/<session>.jsonl` (and the subagent's under `<session>/subagents/`)."""
    claude = npm_cli("claude-code", version, "claude")
    home, work = workspace(base)
    script, conversations = claude_code_script(work)
    with ScriptedModelServer(script, conversations=conversations) as server:
        env = {"HOME": str(home), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-ant-scripted",
               # root may bypass permissions only in a sandbox; no updater, telemetry or other outside traffic
               "IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        stdout, seconds = run_cli([str(claude), "-p", CLAUDE_PROMPT, "--model", CLAUDE_MODEL,
                                   "--dangerously-skip-permissions", "--output-format", "json"], env, work)
    return CliRun(version, home, work, server, script, conversations, stdout, seconds)


# --- Codex ------------------------------------------------------------------------------------------------------

CODEX_MODEL = "gpt-5-codex"
CODEX_PROMPT = "Copy the notes into out.txt and check for a missing file."


def codex_script() -> list[Turn]:
    """List the workspace, read a file, write one, a command that fails, the answer: all through Codex's shell
    tool (`exec_command`, the one both releases offer this model)."""
    from tests.scripted_model_server import answer, call

    return [call("exec_command", cmd="ls"),
            call("exec_command", cmd="cat notes.txt"),
            call("exec_command", cmd="printf 'alpha\\nbeta\\n' > out.txt"),
            call("exec_command", cmd="cat missing.txt"),
            answer("Copied notes.txt to out.txt; missing.txt does not exist.")]


def codex_config(server_url: str) -> str:
    """`$CODEX_HOME/config.toml`: a custom model provider at the scripted server's Responses endpoint, its key
    read from SCRIPTED_API_KEY."""
    return (f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
            f'name = "scripted"\nbase_url = "{server_url}/v1"\nwire_api = "responses"\nenv_key = "SCRIPTED_API_KEY"\n')


def codex_run(version: str, base: Path) -> CliRun:
    """`codex exec` of Codex `version` in a fresh HOME (CODEX_HOME `HOME/.codex`) and workspace under `base`,
    against the scripted server, approvals and sandbox off (the workspace is a temporary folder); it writes
    `HOME/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`."""
    codex = npm_cli("codex", version, "codex")
    home, work = workspace(base)
    script = codex_script()
    with ScriptedModelServer(script) as server:
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(codex_config(server.url))
        env = {"HOME": str(home), "CODEX_HOME": str(home / ".codex"), "SCRIPTED_API_KEY": "sk-scripted"}
        stdout, seconds = run_cli([str(codex), "exec", "--skip-git-repo-check", "--json",
                                   "--dangerously-bypass-approvals-and-sandbox", CODEX_PROMPT], env, work)
    return CliRun(version, home, work, server, script, {}, stdout, seconds)


# --- Gemini CLI -------------------------------------------------------------------------------------------------

GEMINI_MODEL = "gemini-2.5-pro"
GEMINI_PROMPT = "Copy the notes into out.txt and check for a missing file."


def gemini_cli_script(work: Path) -> list[Turn]:
    """List the workspace, read a file, write one, a command that fails, the answer: Gemini CLI's own tools."""
    from tests.scripted_model_server import answer, call

    return [call("list_directory", dir_path=str(work)),
            call("read_file", file_path=str(work / "notes.txt")),
            call("write_file", file_path=str(work / "out.txt"), content=NOTES),
            call("run_shell_command", command="cat missing.txt"),
            answer("Copied notes.txt to out.txt; missing.txt does not exist.")]


def gemini_cli_run(version: str, base: Path) -> CliRun:
    """`gemini -p` of Gemini CLI `version` in a fresh HOME and workspace under `base`, against the scripted
    server (`GOOGLE_GEMINI_BASE_URL`, API-key auth chosen in `~/.gemini/settings.json`), every tool approved
    (`--yolo`, the workspace trusted); it writes `HOME/.gemini/tmp/<project>/chats/session-*.json(l)`."""
    gemini = npm_cli("gemini-cli", version, "gemini")
    home, work = workspace(base)
    script = gemini_cli_script(work)
    (home / ".gemini").mkdir()
    # the auth type's key moved from `selectedAuthType` (0.3x) to `security.auth.selectedType`: both are set
    (home / ".gemini" / "settings.json").write_text(
        '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "selectedAuthType": "gemini-api-key"}')
    with ScriptedModelServer(script) as server:
        env = {"HOME": str(home), "GEMINI_API_KEY": "scripted", "GOOGLE_GEMINI_BASE_URL": server.url,
               "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        stdout, seconds = run_cli([str(gemini), "-p", GEMINI_PROMPT, "-m", GEMINI_MODEL, "--yolo",
                                   "--output-format", "json"], env, work)
    return CliRun(version, home, work, server, script, {}, stdout, seconds)


# --- Qwen Code --------------------------------------------------------------------------------------------------

QWEN_MODEL = "qwen3-coder-plus"
QWEN_PROMPT = "Copy the notes into out.txt and check for a missing file."


QWEN_GEMINI_LAYOUT = "0.1.4"  # the release that still wrote Gemini CLI's recordings (`~/.qwen/tmp/...`)


def qwen_code_script(work: Path, version: str) -> list[Turn]:
    """List the workspace (`glob`: the current release disables `list_directory` by default), read a file, write
    one, a command that fails, the answer: Qwen Code's own tools (0.1.4's `read_file` takes `absolute_path`)."""
    from tests.scripted_model_server import answer, call

    path_key = "absolute_path" if version == QWEN_GEMINI_LAYOUT else "file_path"
    return [call("glob", pattern="*"),
            call("read_file", **{path_key: str(work / "notes.txt")}),
            call("write_file", file_path=str(work / "out.txt"), content=NOTES),
            call("run_shell_command", command="cat missing.txt", is_background=False,
                 description="Show the missing file"),
            answer("Copied notes.txt to out.txt; missing.txt does not exist.")]


def qwen_code_run(version: str, base: Path) -> CliRun:
    """`qwen -p` of Qwen Code `version` in a fresh HOME and workspace under `base`, against the scripted server's
    Chat Completions endpoint (`OPENAI_BASE_URL`, the OpenAI auth type in its settings and, where the flag exists,
    `--auth-type openai`), every tool approved (`--yolo`), usage statistics off; it writes
    `HOME/.qwen/projects/<project>/chats/<session>.jsonl` (0.1.4: `HOME/.qwen/tmp/<project>/chats/session-*.json`)."""
    qwen = npm_cli("qwen-code", version, "qwen")
    home, work = workspace(base)
    script = qwen_code_script(work, version)
    (home / ".qwen").mkdir()
    (home / ".qwen" / "settings.json").write_text(
        '{"security": {"auth": {"selectedType": "openai"}}, "selectedAuthType": "openai", '
        '"privacy": {"usageStatisticsEnabled": false}, "usageStatisticsEnabled": false}')
    auth = [] if version == QWEN_GEMINI_LAYOUT else ["--auth-type", "openai"]
    with ScriptedModelServer(script) as server:
        env = {"HOME": str(home), "OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": "sk-scripted",
               "OPENAI_MODEL": QWEN_MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
        stdout, seconds = run_cli([str(qwen), "-p", QWEN_PROMPT, "--yolo", *auth, "--output-format", "json"],
                                  env, work)
    return CliRun(version, home, work, server, script, {}, stdout, seconds)


def qwen_code_export(run: CliRun, kind: str) -> Path:
    """The file `/export <kind>` (md, json, jsonl, html) of the run's release writes for the run's session:
    `qwen -p "/export <kind>" --resume <session>` in the run's HOME and workspace (the command runs in
    non-interactive mode and writes `qwen-code-export-<time>.<kind>` into the working directory). The model is
    not called: the server answers nothing. Each kind is exported once per run: tests that share the run share
    its export (the workspace holds one file of each kind)."""
    if (run.workspace, kind) in _EXPORTED:
        return _EXPORTED[run.workspace, kind]
    qwen = npm_cli("qwen-code", run.version, "qwen")
    (session,) = (run.home / ".qwen" / "projects").glob("*/chats/*.jsonl")
    before = set(run.workspace.glob("qwen-code-export-*"))
    env = {"HOME": str(run.home), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "sk-scripted",
           "OPENAI_MODEL": QWEN_MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}
    run_cli([str(qwen), "-p", f"/export {kind}", "--resume", session.stem, "--auth-type", "openai"], env,
            run.workspace, timeout=120)
    (written,) = set(run.workspace.glob(f"qwen-code-export-*.{kind}")) - before
    _EXPORTED[run.workspace, kind] = written
    return written


_EXPORTED: dict[tuple[Path, str], Path] = {}  # (a run's workspace, kind) -> the export written for it


def check_qwen_code_close(run: CliRun, ep, calls: list[Played], command, failed) -> None:
    """An export's last command and the episode's end against the scripted run: the failing `cat` with its exit
    code and output, the model, the task and the final answer. `command` is the fourth tool step, `failed` its
    observation; both the JSON and the Markdown exports must read this way."""
    assert command.action.kind == "command" and command.action.code == "cat missing.txt"
    assert failed.kind == "terminal" and failed.exit_code == 1 and failed.text == calls[3].seen
    assert failed.is_error is (run.version != "0.15.10")  # 0.15 records the command's run as a success
    assert ep.agent == QWEN_MODEL and ep.task == QWEN_PROMPT
    assert ep.steps[-1].action.kind == "message" and ep.steps[-1].action.text == run.script[-1].text
    assert ep.terminated and ep.outcome == "unknown"


# --- Aider ------------------------------------------------------------------------------------------------------

AIDER_MODEL = "openai/gpt-4o"  # a model aider knows: the SEARCH/REPLACE (`diff`) edit format, and its prices
# per chat session: the prompt, and the files added to the chat
AIDER_PROMPTS = (("Copy the notes into out.txt and add gamma to the notes.", "notes.txt"),
                 ("Add delta to out.txt.", "out.txt"))
AIDER_COMMIT = "docs: scripted edit"  # the commit message the server gives aider's side request


@dataclass(frozen=True)
class Edit:
    """A SEARCH/REPLACE block the scripted model sends: the file, the text to find, its replacement."""

    path: str
    search: str
    replace: str


def edit_reply(intro: str, edits: list[Edit]) -> str:
    """A model reply in aider's `diff` edit format: the intro, then each block after its file name."""
    blocks = [f"{e.path}\n```\n<<<<<<< SEARCH\n{e.search}=======\n{e.replace}>>>>>>> REPLACE\n```" for e in edits]
    return "\n\n".join([intro, *blocks]) + "\n"


# per chat session, the replies in order, each with its blocks: session 1 creates out.txt and sends a block that
# cannot match (notes.txt has no "delta"), then fixes it after aider's reflection; session 2 edits out.txt
AIDER_EDITS = (
    (("I will copy the notes and add gamma.", (Edit("out.txt", "", NOTES), Edit("notes.txt", "delta\n", "gamma\n"))),
     ("The second block did not match; here it is fixed.", (Edit("notes.txt", "beta\n", "beta\ngamma\n"),))),
    (("Adding delta.", (Edit("out.txt", "beta\n", "beta\ndelta\n"),)),),
)


def aider_script(session: int) -> list[Turn]:
    from tests.scripted_model_server import answer

    return [answer(edit_reply(intro, list(edits))) for intro, edits in AIDER_EDITS[session]]


def aider_loop(protocol: str, body: dict) -> bool:
    """Aider's own requests (the edit loop's system prompt asks for SEARCH/REPLACE blocks), not its commit
    message requests."""
    messages = body.get("messages") or [{}]
    return "SEARCH/REPLACE" in str(messages[0].get("content"))


def aider_run(version: str, base: Path) -> CliRun:
    """`aider --message` of Aider `version`, once per chat session, in a fresh HOME and a git workspace under
    `base`, against the scripted server's Chat Completions endpoint (`--openai-api-base`), every question
    answered yes, commits on; it writes `.aider.chat.history.md`, `.aider.input.history` and the
    `--llm-history-file` in the workspace."""
    aider = venv_cli("aider", version, "aider")
    home, work = workspace(base)
    (home / ".gitconfig").write_text("[user]\n\tname = Scripted\n\temail = scripted@example.org\n")
    # aider's model metadata cache, filled from the litellm copy in its venv: aider then fetches nothing
    (home / ".aider" / "caches").mkdir(parents=True)
    (prices,) = aider.parent.parent.glob("lib/python*/site-packages/litellm/model_prices_and_context_window_backup"
                                         ".json")
    shutil.copy(prices, home / ".aider" / "caches" / "model_prices_and_context_window.json")
    env = {"HOME": str(home), "OPENAI_API_KEY": "sk-scripted", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    for argv in (["git", "init", "-q"], ["git", "add", "notes.txt"], ["git", "commit", "-qm", "notes"]):
        run_cli(argv, env, work)
    sessions, stdout, seconds = [], "", 0.0
    for n, (prompt, chat_file) in enumerate(AIDER_PROMPTS):
        script = aider_script(n)
        with ScriptedModelServer(script, side=lambda protocol, body: AIDER_COMMIT, loop=aider_loop) as server:
            out, took = run_cli([str(aider), "--model", AIDER_MODEL, "--openai-api-base", f"{server.url}/v1",
                                 "--yes-always", "--no-pretty", "--no-check-update", "--analytics-disable",
                                 "--no-show-release-notes", "--no-show-model-warnings", "--no-gitignore",
                                 "--map-tokens", "0", "--llm-history-file", ".aider.llm.history",
                                 "--message", prompt, chat_file], env, work)
        sessions.append(CliSession(prompt, server, script))
        stdout, seconds = stdout + out, seconds + took
    first = sessions[0]
    return CliRun(version, home, work, first.server, first.script, {}, stdout, seconds, sessions)


# --- OpenCode ---------------------------------------------------------------------------------------------------

OPENCODE_MODEL = "scripted-model"
OPENCODE_PROMPT = "Copy the notes into out.txt and check for a missing file."


def opencode_script(work: Path) -> tuple[list[Turn], dict[str, list[Turn]]]:
    """List the workspace, read a file, write one, a command that fails, a subagent (`task`: a session of its
    own), the answer: OpenCode's own tools (its `glob` and `grep` run ripgrep, which OpenCode would download when
    `rg` is not installed: the listing is `ls`); the subagent runs one command and answers."""
    from tests.scripted_model_server import answer, call

    main = [call("bash", command="ls", description="List the files"),
            call("read", filePath=str(work / "notes.txt")),
            call("write", filePath=str(work / "out.txt"), content=NOTES),
            call("bash", command="cat missing.txt", description="Show the missing file"),
            call("task", description="Count lines", prompt=SUBAGENT_PROMPT, subagent_type="general"),
            answer("Copied notes.txt to out.txt; missing.txt does not exist.")]
    sub = [call("bash", command="wc -l notes.txt", description="Count the lines"), answer("notes.txt has 2 lines.")]
    return main, {SUBAGENT_PROMPT: sub}


def opencode_config(server_url: str) -> dict:
    """`opencode.json`: a custom provider through the OpenAI-compatible AI SDK package at the scripted server's
    Chat Completions endpoint, its model the default and the small one (titles), every tool allowed, no sharing
    or updates: nothing leaves loopback."""
    return {"provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                                      "options": {"baseURL": f"{server_url}/v1", "apiKey": "sk-scripted"},
                                      "models": {OPENCODE_MODEL: {"name": "Scripted", "tool_call": True}}}},
            "model": f"scripted/{OPENCODE_MODEL}", "small_model": f"scripted/{OPENCODE_MODEL}",
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
            "autoupdate": False, "share": "disabled"}


def opencode_env(home: Path) -> dict:
    """HOME and every XDG folder under `home`: config, data (the session store), cache and state."""
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
            "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}


def opencode_run(version: str, base: Path) -> CliRun:
    """`opencode run` of OpenCode `version` in a fresh HOME and workspace under `base`, against the scripted
    server (a custom provider in `~/.config/opencode/opencode.json`); it writes its sessions under
    `~/.local/share/opencode/`: JSON files in `storage/` up to 1.1, the SQLite database `opencode.db` from 1.2.
    The prompt goes as separate words (`run` quotes an argument that holds spaces when it joins them)."""
    import json

    opencode = npm_cli("opencode", version, "opencode")
    home, work = workspace(base)
    script, conversations = opencode_script(work)
    with ScriptedModelServer(script, model=OPENCODE_MODEL, conversations=conversations) as server:
        (home / ".config" / "opencode").mkdir(parents=True)
        (home / ".config" / "opencode" / "opencode.json").write_text(json.dumps(opencode_config(server.url)))
        stdout, seconds = run_cli([str(opencode), "run", *OPENCODE_PROMPT.split()], opencode_env(home), work)
    return CliRun(version, home, work, server, script, conversations, stdout, seconds)


def opencode_export(run: CliRun, session_id: str) -> str:
    """`opencode export <session>` of the run's release in the run's HOME: the session as OpenCode gives it."""
    opencode = npm_cli("opencode", run.version, "opencode")
    stdout, _ = run_cli([str(opencode), "export", session_id], opencode_env(run.home), run.workspace, timeout=120)
    return stdout



# Where each release's binary holds the TUI's transcript writer (`formatTranscript`,
# `src/cli/cmd/tui/util/transcript.ts`): the text between the markers, its entry function, the name its code
# gives the `Locale` module. No command, flag or server route writes the markdown: the TUI's `/export` and
# `/copy` alone call it, so the test runs that code, cut unchanged from the binary, under node.
OPENCODE_WRITER = {"1.1.65": (b"// src/cli/cmd/tui/util/transcript.ts\n",
                              b"// src/cli/cmd/tui/routes/session/index.tsx", "formatTranscript", "Locale"),
                   "1.18.33": (b"function Td(U){", b"var Oa={left:", "ki", "SU")}


def opencode_transcript(run: CliRun, exported: str, thinking: bool = True) -> str:
    """The markdown `/export` of the run's release writes for the session of `exported` (the `opencode export`
    JSON: the session and its messages with their parts, as the TUI holds them), with tool details and assistant
    metadata, reasoning when `thinking`; the model's display name from the run's provider config; times in UTC."""
    import json

    binary = PRODUCERS / f"opencode-{run.version}" / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"
    start, end, entry, locale = OPENCODE_WRITER[run.version]
    data = binary.read_bytes()
    at = data.index(start)
    source = data[at:data.index(end, at)].decode()
    assert "**Session ID:**" in source and "_Thinking:_" in source, f"no transcript writer in {binary}"
    providers = [{"id": "scripted", "models": {OPENCODE_MODEL: {"name": "Scripted"}}}]
    options = {"thinking": thinking, "toolDetails": True, "assistantMetadata": True, "providers": providers}
    script = (f"const {locale} = {{titlecase: (s) => s.replace(/\\b\\w/g, (c) => c.toUpperCase())}};\n{source}\n"
              f"const doc = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
              f"process.stdout.write({entry}(doc.info, doc.messages, {json.dumps(options)}));\n")
    done = subprocess.run(["node", "-e", script], input=exported, capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ.get("PATH", ""), "TZ": "UTC", "LANG": "C.UTF-8"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout

# --- Cline ------------------------------------------------------------------------------------------------------

# Cline offers native tool calls to the model families it knows (gpt-5, claude-4...) and XML tools in the text
# to any other: the scripted model takes a gpt-5 name so that the calls are the server's own
CLINE_MODEL = "gpt-5"
CLINE_PROMPT = "Copy the notes into out.txt and check for a missing file."
CLINE_ANSWER = "Copied notes.txt to out.txt; missing.txt does not exist."


def cline_script() -> list[Turn]:
    """List the workspace, read a file, write one (Cline's `apply_patch` for this family), a command that fails,
    then `attempt_completion`, Cline's own end of a task (a text answer alone is a mistake to Cline)."""
    from tests.scripted_model_server import answer, call

    return [call("list_files", path=".", recursive="false"),
            call("read_file", path="notes.txt"),
            call("apply_patch", input="*** Begin Patch\n*** Add File: out.txt\n+alpha\n+beta\n*** End Patch"),
            call("execute_command", command="cat missing.txt", requires_approval="false"),
            call("attempt_completion", result=CLINE_ANSWER),
            answer(CLINE_ANSWER)]


def cline_sdk_script(work: Path) -> list[Turn]:
    """The same task in the tools of the Cline CLI 3.x (its SDK agent): `run_commands`, `read_files`,
    `apply_patch` (its editor for this family); a text answer ends its task."""
    from tests.scripted_model_server import answer, call

    return [call("run_commands", commands=["ls"]),
            call("read_files", files=[{"path": str(work / "notes.txt")}]),
            call("apply_patch", input="*** Begin Patch\n*** Add File: out.txt\n+alpha\n+beta\n*** End Patch"),
            call("run_commands", commands=["cat missing.txt"]),
            answer(CLINE_ANSWER)]


def cline_run(version: str, base: Path) -> CliRun:
    """The Cline CLI `version` in a fresh HOME and workspace under `base`, its OpenAI-compatible provider set by
    `cline auth` at the scripted server. 2.x: `cline -y` (yolo: every action approved) writes the task folder
    `HOME/.cline/data/tasks/<id>/` (`api_conversation_history.json`, `ui_messages.json`, `task_metadata.json`).
    3.x (the SDK agent, tools auto-approved by default) writes `HOME/.cline/data/sessions/<id>/<id>.json` and
    `<id>.messages.json`; its sessions run in-process (`CLINE_SESSION_BACKEND_MODE=local`), not in the
    background hub daemon it would otherwise start and leave running."""
    cline = npm_cli("cline", version, "cline")
    home, work = workspace(base)
    sdk = not version.startswith("2.")
    script = cline_sdk_script(work) if sdk else cline_script()
    with ScriptedModelServer(script, model=CLINE_MODEL) as server:
        env = {"HOME": str(home), "CLINE_SESSION_BACKEND_MODE": "local"}
        run_cli([str(cline), "auth", "-p", "openai", "-k", "sk-scripted", "-m", CLINE_MODEL, "-b",
                 f"{server.url}/v1"], env, work, timeout=120)
        argv = [str(cline), "--json", CLINE_PROMPT] if sdk else [str(cline), "-y", "--json", CLINE_PROMPT]
        stdout, seconds = run_cli(argv, env, work)
    return CliRun(version, home, work, server, script, {}, stdout, seconds)


# Cline's XML tool form: a model outside the families it gives native tools to gets its tools described in the
# system prompt and writes each call as XML in its text (requests without `tools`: the server's `side` answers)
CLINE_XML_MODEL = "scripted-model"
CLINE_XML_CALLS = [("list_files", {"path": ".", "recursive": "false"}),
                   ("read_file", {"path": "notes.txt"}),
                   ("write_to_file", {"path": "out.txt", "content": NOTES.rstrip("\n")}),
                   ("execute_command", {"command": "cat missing.txt", "requires_approval": "false"}),
                   ("attempt_completion", {"result": CLINE_ANSWER})]


def cline_xml_turn(number: int) -> str:
    """The model's `number`-th answer: the call in Cline's XML form, after a sentence of thought."""
    name, params = CLINE_XML_CALLS[min(number, len(CLINE_XML_CALLS) - 1)]
    body = "".join(f"<{k}>\n{v}\n</{k}>\n" if "\n" in v else f"<{k}>{v}</{k}>\n" for k, v in params.items())
    return f"Step {number + 1}.\n<{name}>\n{body}</{name}>"


def cline_xml_run(version: str, base: Path) -> CliRun:
    """`cline -y` of the Cline CLI `version` (2.x) with a model Cline gives no native tools: each request is
    answered with the next XML call of `CLINE_XML_CALLS`, counted by the assistant turns it carries."""
    from tests.scripted_model_server import answer

    def xml_side(protocol: str, body: dict) -> str:
        return cline_xml_turn(sum(m.get("role") == "assistant" for m in body.get("messages") or []))

    cline = npm_cli("cline", version, "cline")
    home, work = workspace(base)
    script = [answer(CLINE_ANSWER)]  # never played: the requests offer no tools
    with ScriptedModelServer(script, side=xml_side, model=CLINE_XML_MODEL) as server:
        env = {"HOME": str(home)}
        run_cli([str(cline), "auth", "-p", "openai", "-k", "sk-scripted", "-m", CLINE_XML_MODEL, "-b",
                 f"{server.url}/v1"], env, work, timeout=120)
        stdout, seconds = run_cli([str(cline), "-y", "--json", CLINE_PROMPT], env, work)
    return CliRun(version, home, work, server, script, {}, stdout, seconds)
