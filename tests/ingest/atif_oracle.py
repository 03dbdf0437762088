"""Run inside a Harbor environment (`.venv/producers/harbor-<version>/bin/python`), not the project's: reads
ATIF files with Harbor's own pydantic `Trajectory` model and prints, as one JSON object, for each path either
the error Harbor raises or what Harbor's model reads in it (per step: source, copied-context mark, tool names),
so a test can compare our reading with the producer's. An agent step without tool calls also gets what Terminus
2's own reply parser (`TerminusJSONPlainParser`, or `TerminusXMLPlainParser` where `agent.extra.parser` is
"xml") reads in its message: the commands it would send
(keystrokes, duration), whether it claims the task complete, and its error (a reply Terminus 2 would refuse).
Imports nothing of this project.

Usage: python atif_oracle.py FILE...
"""

import json
import sys

import importlib.util
from pathlib import Path

import harbor
from harbor.models.trajectories import Trajectory


def _terminus_parser(module_name: str, class_name: str):
    """One of Terminus 2's reply parsers, loaded from its own file: the package's `__init__` imports the whole
    agent, whose runtime dependencies (tenacity, litellm...) the models-only environment does not install; the
    parsers themselves need only the standard library."""
    path = Path(harbor.__file__).parent / "agents" / "terminus_2" / f"{module_name}.py"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, class_name)


PARSERS = {"json": _terminus_parser("terminus_json_plain_parser", "TerminusJSONPlainParser"),
           "xml": _terminus_parser("terminus_xml_plain_parser", "TerminusXMLPlainParser")}


def _reply(message, parser: str) -> dict | None:
    if not isinstance(message, str):
        return None
    parsed = PARSERS[parser]().parse_response(message)
    return {"commands": [[c.keystrokes, c.duration] for c in parsed.commands],
            "complete": bool(parsed.is_task_complete), "error": parsed.error}


def _steps(trajectory) -> list[dict]:
    extra = getattr(trajectory.agent, "extra", None) or {}
    parser = "xml" if extra.get("parser") == "xml" else "json"
    return [{"source": s.source, "copied": bool(getattr(s, "is_copied_context", None)),
             "tools": [c.function_name for c in s.tool_calls or []],
             "reply": _reply(s.message, parser) if s.source == "agent" and not s.tool_calls else None}
            for s in trajectory.steps]


def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        trajectory = Trajectory.model_validate(doc)
    except Exception as e:  # pydantic's ValidationError, or a validator's ValueError
        return {"error": " ".join(line.strip() for line in str(e).splitlines()[:3])[:400]}
    subs = getattr(trajectory, "subagent_trajectories", None) or []
    return {"schema_version": trajectory.schema_version, "steps": _steps(trajectory),
            "subagents": [_steps(s) for s in subs]}


if __name__ == "__main__":
    print(json.dumps({path: _read(path) for path in sys.argv[1:]}))
