"""WebVoyager result folders (and Set-of-Mark agents built on its loop): `task<id>/interact_messages.json`, the
chat the agent had with its model, and `screenshot<it>.png`, the labelled page it saw at iteration `it`.

The chat is a list of `{role, content}`: the system prompt (Numerical Labels on every web element), then per
iteration a user turn and the model's reply `Thought: ... Action: ...`. A user turn is an observation (its
text: `Observation:` then the instructions and, after the first line break, the labelled elements `[n]:
<tag> "text";`; its image is saved as `{b64_img}`, the screenshot being on disk), or the loop's own feedback
when the last reply could not be used (`Format ERROR: ...`, `The action you have chosen cannot be executed
...`): then no screenshot is taken, so `screenshot<it>.png` is missing for that `it`. Older observations
are clipped by the agent to `Observation: A screenshot and some texts. (Omitted in context.)` before it
writes the file: their element lists are lost, their screenshots are not; such a step is a screenshot-only
observation (`env.observations_without_text` lists the step indexes).

One step per reply: the observation is the user turn before it (with screenshot `it`), the action the reply's
`Action:` as the loop parses it (`Click [n]` -> click, `Type [n]; text` -> type, `Scroll [n|WINDOW]; up|down`
-> scroll, `Wait`, `GoBack` -> back, `Google` -> navigate to Google, `ANSWER; text` -> done with the answer),
the target element `{"label": n, "text": ...}` from that observation's list, no coordinates (the loop clicks
the element, and the file records no box). A reply the loop would refuse (no `Thought:` / `Action:`, or an
action it cannot parse) is a `message` step with the reply. `screenshot<it>_no_box.png` (the same page without
labels, written by some versions) is counted in env, not used as the observation. No evaluator verdict is in
the folder (WebVoyager's auto-evaluation is a separate run): the outcome is unknown; the agent's answer is the
`done` action's text. The folder's other files (the unlabelled screenshots, `agent.log`, anything a fork
writes) are named by `members` as files of the run it does not read: `ignored_inputs` lists them, with why.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterator

import orjson

from ingest.format_info import FormatInfo
from ingest.members import unread_in
from ingest.png import png_size
from ingest.record import Action, Episode, Observation, Rejected, warn
from ingest.source import Source, SourceError, parse_json
from ingest.transcript import Message, Run, ToolCall, records

FORMAT = "webvoyager"
VERSION = "1"
INFO = FormatInfo(
    group="browser", rank=204, domains=('web',), platform="browser",
    summary=("WebVoyager result folders (Set-of-Mark agents: `Click [n]`, `Type [n]; text`, `ANSWER` from the model's"
             " reply onto the labelled element of the observation it acted on, one screenshot per observation, the "
             "loop's own feedback turns as text observations, observations the agent clipped kept as screenshots "
             "without text and listed in `env`)"),
    producer="WebVoyager's loop (Selenium, Set-of-Mark screenshots) and loops built on it",
    versions=("MinorJerry/WebVoyager @ 5a78967 (GPT-4V example), gndd1221/webvoyager_test @ d374622 (a Gemini run of "
              "a modified loop)"),
    proof=("cannot run here (live websites, a vendor model): two real Apache-2.0 result folders beside the test, read"
           " against the loop's action grammar and its rule that it screenshots only the observations it sends "
           "(goldens: 3 steps with 3 screenshots; 12 steps with 9 screenshots, 3 feedback turns, 6 clipped "
           "observations) (`tests/ingest/browser/test_webvoyager.py`)"),
)

MESSAGES = "interact_messages.json"
_FEEDBACK = ("Format ERROR", "The action you have chosen cannot be exe")  # the loop's own replies
_CLIPPED = "(Omitted in context.)"
_SYSTEM_FIRST = re.compile(rb'^\[\s*\{\s*"role":\s*"system"')
_TASK = re.compile(r"Now given a task:\s*(.*?)\s*Please interact with (\S+?) and get the answer", re.S)
_ELEMENT = re.compile(r"\[(\d+)\]:\s*(.*?)(?=;\s*\[\d+\]:|;?\s*$)", re.S)
# the loop's own action grammar, tried in this order on the text after "Action:"
_ACTIONS = (
    ("click", re.compile(r"Click \[?(\d+)\]?")),
    ("type", re.compile(r"Type \[?(\d+)\]?[; ]+\[?(.[^\]]*)\]?")),
    ("scroll", re.compile(r"Scroll \[?(\d+|WINDOW)\]?[; ]+\[?(up|down)\]?")),
    ("wait", re.compile(r"^Wait")),
    ("goback", re.compile(r"^GoBack")),
    ("google", re.compile(r"^Google")),
    ("answer", re.compile(r"ANSWER[; ]+\[?(.[^\]]*)\]?")),
)


def units(files: list[str], head) -> list[str]:
    """Folders holding `interact_messages.json` whose start is a chat list opening with WebVoyager's system
    prompt (the Numerical Labels it puts on web elements)."""
    found = set()
    for path in files:
        if posixpath.basename(path) != MESSAGES:
            continue
        start = head(path).lstrip()
        if _SYSTEM_FIRST.match(start) and (b"Numerical Label" in start or b"numerical label" in start):
            found.add(posixpath.dirname(path))
    return sorted(found)


_READ = re.compile(r"screenshot\d+\.png")
_NO_BOX = re.compile(r"screenshot\d+_no_box\.png")


def members(found: list[str], files: list[str], head) -> dict[str, list]:
    """The files of each task folder the reader does not read (the chat and the labelled screenshots it does)."""
    def why(rel: str) -> str:
        return "the screenshot without Set-of-Mark labels (counted in env)" if _NO_BOX.fullmatch(rel) else \
            f"WebVoyager's reader reads {MESSAGES} and the labelled screenshots"

    return {folder: unread_in(folder, files, lambda rel: rel == MESSAGES or bool(_READ.fullmatch(rel)), why)
            for folder in found}


def _content(message: dict) -> tuple[str, int]:
    """A turn's text and how many images it carried."""
    content = message.get("content")
    if isinstance(content, str):
        return content, 0
    parts = content if isinstance(content, list) else []
    text = "\n".join(p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text")
    return text, sum(1 for p in parts if isinstance(p, dict) and p.get("type") == "image_url")


def _observed(text: str) -> tuple[str | None, bool]:
    """(the observation's text, whether the agent clipped it): the loop's note before its instructions (a
    typing warning, a PDF's answer) and the element list after the instructions' line."""
    at = text.rfind("Observation:")
    if at < 0:
        return None, False
    rest = text[at + len("Observation:"):]
    if _CLIPPED in rest:
        return None, True
    instructions, _, elements = rest.partition("\n")
    note = re.split(r"\s*[Pp]lease analyze", instructions, maxsplit=1)[0].strip()
    return "\n".join(p for p in (note, elements.strip()) if p) or None, False


def _elements(text: str | None) -> dict[int, str]:
    return {int(n): desc.strip() for n, desc in _ELEMENT.findall(text or "")}


def _action(reply: str, elements: dict[int, str]) -> Action | None:
    """The reply's action as the loop parses it, None when the loop would refuse it."""
    if "Thought:" not in reply or "Action:" not in reply:
        return None
    chosen = reply.split("Action:")[1].strip()
    for key, pattern in _ACTIONS:
        m = pattern.search(chosen)
        if m:
            break
    else:
        return None

    def target(label: str) -> str | None:
        if not label.isdigit():
            return None
        return orjson.dumps({"label": int(label), "text": elements.get(int(label))}).decode()

    raw = orjson.dumps({"reply": reply, "action": chosen}).decode()
    if key == "click":
        return Action(kind="click", element=target(m.group(1)), raw=raw)
    if key == "type":
        return Action(kind="type", text=m.group(2), element=target(m.group(1)), raw=raw)
    if key == "scroll":
        return Action(kind="scroll", direction=m.group(2), element=target(m.group(1)), raw=raw)
    if key == "answer":
        return Action(kind="done", text=m.group(1), raw=raw)
    if key == "google":
        return Action(kind="navigate", text="https://www.google.com/", raw=raw)
    return Action(kind={"wait": "wait", "goback": "back"}[key], raw=raw)


def _screenshot(source: Source, it: int, rows: list[Rejected]) -> tuple[str | None, tuple | None]:
    rel = f"screenshot{it}.png"
    if not source.exists(rel):
        return None, None
    try:
        data = source.read_bytes(rel)
    except SourceError as e:
        rows.append(Rejected(e.rule, f"{e.reason}; step {it - 1} is kept without its screenshot", rel))
        return None, None
    return source.put_blob(data, "image/png", source.uri), png_size(data)


def _user(source: Source, msg: dict, it: int, env: dict, rows: list[Rejected]) -> Message:
    text, _ = _content(msg)
    if text.startswith(_FEEDBACK):
        return Message(role="user", text=text, observation=Observation(kind="text", text=text),
                       where=f"user turn {it}")
    shown, clipped = _observed(text)
    if clipped:
        env.setdefault("observations_without_text", []).append(it - 1)
    ref, size = _screenshot(source, it, rows)
    if ref is None:
        env.setdefault("observations_without_screenshot", []).append(it - 1)
    obs = Observation(kind="web", text=shown, screenshot=ref, width=size[0] if size else None,
                      height=size[1] if size else None)
    return Message(role="user", text=text, observation=obs, where=f"user turn {it}")


def _assistant(msg: dict, elements: dict[int, str], env: dict) -> Message:
    reply, _ = _content(msg)
    action = _action(reply, elements)
    if action is None:
        warn(env, "unparsed_reply", "a reply the loop could not use (no Thought/Action, or no action it parses) "
             "is kept as a message step")
        return Message(role="assistant", text=reply, raw=orjson.dumps({"reply": reply}).decode())
    thought = reply.split("Action:")[0].split("Thought:", 1)[-1].strip()
    return Message(role="assistant", text=thought or None, tool_calls=[ToolCall(None, action.kind, action=action)])


def _messages(source: Source, chat: list, env: dict, rows: list[Rejected]) -> list[Message]:
    messages, elements, it = [], {}, 0
    for i, msg in enumerate(chat):
        role = msg.get("role") if isinstance(msg, dict) else None
        if role == "system":
            messages.append(Message(role="system", text=_content(msg)[0]))
        elif role == "user":
            it += 1
            messages.append(_user(source, msg, it, env, rows))
            elements = _elements(messages[-1].observation.text) if messages[-1].observation.kind == "web" else {}
        elif role == "assistant":
            messages.append(_assistant(msg, elements, env))
        else:
            rows.append(Rejected("bad_record", f"{MESSAGES}: message {i} has no role WebVoyager writes "
                                 f"({role!r}); left out", MESSAGES, record_id=str(i)))
    return messages


def read(source: Source) -> Iterator[Episode | Rejected]:
    chat = parse_json(source.read_bytes(MESSAGES), MESSAGES, source.budgets)
    if not isinstance(chat, list):
        raise SourceError("bad_record", f"{MESSAGES}: expected a list of chat messages")
    folder = posixpath.basename(source.path.rstrip("/"))
    env: dict = {"task_id": folder[4:] if folder.startswith("task") else folder}
    rows: list[Rejected] = []
    messages = _messages(source, chat, env, rows)
    first = next((m.text for m in messages if m.role == "user"), "") or ""
    task = _TASK.search(first)
    if task:
        env["start_url"] = task.group(2)
    names = source.listdir()
    env["screenshots"] = sum(1 for n in names if re.fullmatch(r"screenshot\d+\.png", n))
    unlabelled = sum(1 for n in names if re.fullmatch(r"screenshot\d+_no_box\.png", n))
    if unlabelled:
        env["screenshots_without_labels"] = unlabelled
    yield from rows
    yield from records(messages, Run(domain="web", platform="browser", task=task.group(1) if task else first,
                                     agent="WebVoyager", env=env), MESSAGES)
