"""UI-TARS's reply grammar, decoded (never evaluated): `Thought: ...` (or `Reflection: ... Action_Summary: ...`)
then `Action: name(key='value', ...)`, several actions apart by a blank line, as ByteDance's own parser
(`ui_tars.action_parser.parse_action_to_structure_output`) splits them.

Boxes (`start_box`, `end_box`, and `point` / `start_point` / `end_point`, the names it maps to them) are kept as
the model's numbers: `(x,y)`, `(x1,y1,x2,y2)`, `[x1, y1, x2, y2]`, with or without `<|box_start|>` /
`<|box_end|>`, or `<point>x y</point>`. What they mean depends on the model and on the loop that runs it:
UI-TARS 1.0 (Qwen2-VL) writes thousandths of the screenshot, UI-TARS 1.5 (Qwen2.5-VL) absolute pixels of the
screenshot as the model saw it after its smart resize; a reader says which space the loop read them in.
"""

from __future__ import annotations

import ast
import re

_BOX_NAMES = {"point": "start_box", "start_point": "start_box", "end_point": "end_box"}
_TYPE = re.compile(r"^type\(content=(['\"])(.*)\1\)\s*$", re.S)
_POINT = re.compile(r"<point>\s*(-?[\d.]+)\s+(-?[\d.]+)\s*</point>")


def box(value: str) -> list[float] | None:
    """The numbers of a box or point argument, as the model wrote them; None when it holds none."""
    text = _POINT.sub(r"(\1,\2)", value)
    text = re.sub(r"<\|box_(start|end)\|>|</?bbox>", "", text)
    numbers = re.findall(r"-?\d+(?:\.\d+)?", text)
    return [float(n) for n in numbers] if len(numbers) in (2, 4) else None


def center(numbers: list[float]) -> tuple[float, float]:
    """The point a box stands for: its centre (a point is its own)."""
    if len(numbers) == 4:
        return (numbers[0] + numbers[2]) / 2, (numbers[1] + numbers[3]) / 2
    return numbers[0], numbers[1]


def _call(text: str) -> dict | None:
    """`name(key='value', ...)` as {"name", "args"}; None when it is not one call with literal arguments."""
    typed = _TYPE.match(text.strip())
    if typed:  # the content may hold quotes the model did not escape: taken as written, as UI-TARS does
        return {"name": "type", "args": {"content": typed.group(2)}}
    try:
        node = ast.parse(text.strip().replace("\n", "\\n"), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
        return None
    args = {}
    for keyword in node.keywords:
        if keyword.arg is None or not isinstance(keyword.value, ast.Constant):
            return None
        args[_BOX_NAMES.get(keyword.arg, keyword.arg)] = str(keyword.value.value)
    return {"name": node.func.id, "args": args}


def parse_reply(reply: str) -> tuple[str | None, list[dict]]:
    """(the thought, the actions) of a UI-TARS reply; an action is {"name", "args", "boxes"} where `boxes`
    maps each box argument to its numbers; an action that cannot be read is {"unparsed": text}. No `Action:`:
    no actions."""
    text = reply.strip()
    thought = re.search(r"(?:Thought|Action_Summary): (.+?)(?=\s*Action: |$)", text, re.S)
    if "Action:" not in text:
        return (thought.group(1).strip() if thought else None), []
    actions = []
    for part in text.split("Action:")[-1].strip().split(")\n\n"):
        part = part.strip()
        if not part.endswith(")"):
            part += ")"
        call = _call(part)
        if call is None:
            actions.append({"unparsed": part})
            continue
        call["boxes"] = {k: box(v) for k, v in call["args"].items() if k.endswith("_box") and box(v)}
        actions.append(call)
    return (thought.group(1).strip() if thought else None), actions
