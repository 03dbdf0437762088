"""Where an action lands on the screen it was taken on: marks in the screen's own pixel space.

Actions carry normalized coordinates (x, y, x2, y2 in [0, 1]); the observation carries the pixel size. A
screen is drawn as an SVG whose viewBox is that size laid exactly over the screenshot, so a mark at
(x * width, y * height) sits at the same fraction of the image however large the page shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

POINT_KINDS = {"tap", "long_press", "click", "double_click", "right_click", "move"}
PATH_KINDS = {"swipe", "drag", "scroll"}
DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
DEFAULT_SIZE = 1000  # viewBox side when the observation has no pixel size


@dataclass
class Mark:
    kind: str  # point | path
    action: str  # the action kind, shown as the mark's label
    x: float  # normalized, as recorded
    y: float
    px: float  # in viewBox units
    py: float
    px2: float | None = None
    py2: float | None = None


@dataclass
class Screen:
    width: int
    height: int
    screenshot: str | None  # blob hex, or None: marks on an empty screen of the recorded size
    marks: list[Mark]
    sized: bool = True  # width and height are the recorded pixel size (else DEFAULT_SIZE, a square)

    @property
    def radius(self) -> float:
        return 0.03 * min(self.width, self.height)


def _unit(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and 0 <= v <= 1 else None


def marks(action: dict | None, width: int, height: int) -> list[Mark]:
    """Marks for an action with coordinates; none for actions without (or with out-of-range) ones."""
    if not action or action.get("kind") not in POINT_KINDS | PATH_KINDS:
        return []
    x, y = _unit(action.get("x")), _unit(action.get("y"))
    if x is None or y is None:
        return []
    kind = action["kind"]
    mark = Mark("point", kind, x, y, x * width, y * height)
    if kind in PATH_KINDS:
        x2, y2 = _unit(action.get("x2")), _unit(action.get("y2"))
        if x2 is None or y2 is None:  # a scroll with only a direction: a short arrow that way
            dx, dy = DIRECTIONS.get(str(action.get("direction") or "").lower(), (0, 0))
            x2, y2 = (min(max(x + 0.15 * dx, 0), 1), min(max(y + 0.15 * dy, 0), 1)) if (dx or dy) else (None, None)
        if x2 is not None:
            mark = Mark("path", kind, x, y, x * width, y * height, x2 * width, y2 * height)
    return [mark]


def screen(observation: dict | None, action: dict | None) -> Screen | None:
    """The screen to draw for a step: its screenshot and the action's marks; None when there is neither."""
    observation = observation or {}
    ref = observation.get("screenshot") or ""
    sha = ref.removeprefix("sha256:") if ref.startswith("sha256:") else None
    width, height = (observation.get(k) for k in ("width", "height"))
    width, height = (v if isinstance(v, int) and v > 0 else None for v in (width, height))
    w, h = (width, height) if width and height else (DEFAULT_SIZE, DEFAULT_SIZE)
    found = marks(action, w, h)
    if not sha and not found:
        return None
    return Screen(w, h, sha, found, bool(width and height))
