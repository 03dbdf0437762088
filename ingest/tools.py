"""Tool calls and tool results as steps: shared by the agent formats (SWE-agent, OpenHands, MCP, ATIF,
AgentWorldBench) so the same call gets the same action whatever file it came from.

- A shell tool (`bash`, `execute_bash`, Codex's `shell` / `shell_command` / `exec_command`...) called with a
  `command` string (`cmd` for `exec_command`) or argv (Codex's `shell`: `["bash", "-lc", script]`, unwrapped
  to the script) is a `command` action (code = the command); any other tool call is a `tool_call` with
  `tool_name` and `arguments` (a JSON object string).
- A search tool's result also gets its `[n] url / Title / Snippet / Date` blocks parsed (`ingest.search`).
"""

from __future__ import annotations

import posixpath
import shlex

import orjson

from ingest.record import Action, Observation
from ingest.search import results_tree

SHELL_TOOLS = frozenset({"bash", "execute_bash", "shell", "run_command", "run_shell_command", "terminal",
                         "shell_command", "exec_command"})
_SCRIPT_ARGUMENT = {"exec_command": "cmd"}  # the argument that holds the command, when it is not `command`


def shell_script(command) -> str | None:
    """The script a shell call runs: a string as it is; an argv with `bash -lc <script>` (or sh, zsh, `-c`)
    unwrapped to the script, any other argv quoted back into one line; None for anything else."""
    if isinstance(command, str):
        return command
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        return None
    if len(command) == 3 and command[1] in ("-lc", "-c") and posixpath.basename(command[0]) in ("bash", "sh", "zsh"):
        return command[2]
    return shlex.join(command)


def dumps(value) -> str:
    return orjson.dumps(value).decode()


def arguments_dict(arguments) -> dict | None:
    """Tool arguments as a dict: JSON strings (how chat APIs send them) are decoded; other shapes are
    wrapped as `{"input": value}` so `arguments` is always a JSON object."""
    if arguments is None:
        return None
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments) if arguments.strip() else {}
        except orjson.JSONDecodeError:
            return {"input": arguments}
    return arguments if isinstance(arguments, dict) else {"input": arguments}


def tool_call_values(name: str | None, arguments, raw: str, code: str | None = None) -> tuple:
    """`tool_action(name, arguments, raw, code, shell_as_command=False)` as the values of an `Action` in its field
    order (what `ingest.record.StepColumns` takes): an MCP call, every action a JSON tool call."""
    if type(arguments) is dict:  # nothing to decode
        return "tool_call", None, None, None, None, None, None, None, None, name, dumps(arguments), code, None, raw
    return tuple(vars(tool_action(name, arguments, raw, code, shell_as_command=False)).values())


def tool_action(name: str | None, arguments, raw: str, code: str | None = None, *,
                shell_as_command: bool = True) -> Action:
    """`shell_as_command=False` keeps shell tools as tool calls (MCP: every action is a JSON tool call)."""
    if not shell_as_command and type(arguments) is dict:  # an MCP call: nothing to decode, no shell to unwrap
        # by position: a dataclass with many fields takes them ~2x faster so than by name (a step per call)
        return Action(*tool_call_values(name, arguments, raw, code))
    args = arguments_dict(arguments)
    script = shell_script(args.get(_SCRIPT_ARGUMENT.get(name, "command"))) if name in SHELL_TOOLS and args else None
    if shell_as_command and script is not None:
        return Action(kind="command", code=script, tool_name=name, arguments=dumps(args), raw=raw)
    return Action(kind="tool_call", tool_name=name, arguments=dumps(args if args is not None else {}),
                  code=code, raw=raw)


def tool_observation(tool_name: str | None, text: str | None, *, is_error: bool | None = None,
                     exit_code: int | None = None, kind: str | None = None) -> Observation:
    """A tool's result: `terminal` for shell tools, `tool_result` otherwise (unless `kind` is given)."""
    kind = kind or ("terminal" if tool_name in SHELL_TOOLS else "tool_result")
    return Observation(kind=kind, text=text, ui_tree=results_tree(tool_name, text), is_error=is_error,
                       exit_code=exit_code)
