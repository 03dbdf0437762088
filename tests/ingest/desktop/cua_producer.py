"""Runs cua-agent's computer-use loop (`ComputerAgent` with its TrajectorySaverCallback) on an X virtual display,
in cua-agent's own venv: `python cua_producer.py <display> <model> <api_base> <trajectory_dir> <task>`.

The computer is cua-agent's `CustomComputerHandler` over functions that act on the display as a desktop executor
does: xdotool moves, clicks and types, ImageMagick's `import` takes the screenshot of the whole root window. The
model is whatever answers at `api_base` (the tests' scripted model server). Prints one JSON line: the trajectory
folders it wrote. With a sixth argument `title-tool`, the agent also has a plain function tool,
`window_title`, that answers in text (the visible windows' titles): a run whose states are screenshots except
where that tool answered. With `screenshot-dir=<folder>`, the trajectory saver is given that folder as its
`screenshot_dir` (cua's option that writes each call's screenshot there as `<call_id>.png` and names the file in
metadata.json instead of embedding it).
"""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from cua_agent import ComputerAgent
from cua_agent.computers.custom import CustomComputerHandler

_BUTTONS = {"left": "1", "middle": "2", "right": "3"}


def _xdotool(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True, env=os.environ)


def _screenshot() -> bytes:
    return subprocess.run(["import", "-window", "root", "png:-"], check=True, capture_output=True).stdout


def _size() -> tuple[int, int]:
    out = subprocess.run(["xdotool", "getdisplaygeometry"], check=True, capture_output=True, text=True).stdout
    width, height = out.split()
    return int(width), int(height)


def _key(name: str) -> str:
    return {"enter": "Return", "return": "Return", "ctrl": "ctrl", "control": "ctrl", "esc": "Escape",
            "escape": "Escape", "tab": "Tab", "space": "space", "backspace": "BackSpace"}.get(name.lower(), name)


def _keypress(keys) -> None:
    keys = keys if isinstance(keys, list) else str(keys).replace(" ", "+").split("+")
    _xdotool("key", "+".join(_key(k) for k in keys))


def _click(x: int, y: int, button: str = "left") -> None:
    _xdotool("mousemove", str(x), str(y), "click", _BUTTONS.get(button, "1"))


def _double_click(x: int, y: int) -> None:
    _xdotool("mousemove", str(x), str(y), "click", "--repeat", "2", "1")


def _type(text: str) -> None:
    _xdotool("type", "--delay", "20", text)


def _move(x: int, y: int) -> None:
    _xdotool("mousemove", str(x), str(y))


def _scroll(x: int, y: int, scroll_x: int, scroll_y: int) -> None:
    _xdotool("mousemove", str(x), str(y), "click", "--repeat", str(max(1, abs(scroll_y) // 100 or 1)),
             "5" if scroll_y > 0 else "4")


def window_title() -> str:
    """The titles of the display's named windows, one a line."""
    return subprocess.run(["xdotool", "search", "--onlyvisible", "--name", ".", "getwindowname", "%@"], check=True,
                          capture_output=True, text=True).stdout.strip()


async def _run(model: str, api_base: str, trajectory_dir: str, task: str, title_tool: bool = False,
               screenshot_dir: str = "") -> None:
    computer = CustomComputerHandler({
        "screenshot": _screenshot, "dimensions": _size, "environment": "linux", "click": _click,
        "double_click": _double_click, "type": _type, "keypress": _keypress, "move": _move, "scroll": _scroll,
        "wait": lambda ms=1000: None})
    tools = [computer, window_title] if title_tool else [computer]
    # cua's `screenshot_dir` option moves the screenshots out of metadata.json into files named by call
    saver = {"trajectory_dir": trajectory_dir, "screenshot_dir": screenshot_dir} if screenshot_dir else trajectory_dir
    agent = ComputerAgent(model=model, tools=tools, trajectory_dir=saver, api_base=api_base,
                          api_key="scripted", screenshot_delay=0.3)
    async for _ in agent.run([{"role": "user", "content": task}]):
        pass


def main() -> None:
    display, model, api_base, trajectory_dir, task = sys.argv[1:6]
    os.environ["DISPLAY"] = display
    options = sys.argv[6:]
    screenshots = next((o.split("=", 1)[1] for o in options if o.startswith("screenshot-dir=")), "")
    asyncio.run(_run(model, api_base, trajectory_dir, task, "title-tool" in options, screenshots))
    folders = sorted(str(p) for p in Path(trajectory_dir).iterdir() if p.is_dir() and p != Path(screenshots))
    print(json.dumps({"trajectories": folders}))


if __name__ == "__main__":
    main()
