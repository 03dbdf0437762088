"""One coordinate model for GUI actions: a point is stored in the pixel space of the observation it acts on.

A GUI run can carry several pixel spaces for the same screen: the display size declared to the model (a
computer-use tool's `display_width_px` x `display_height_px`), the logical screen the executor clicks, and
the screenshot (a Retina capture is twice the logical size). The executor scales between them per axis, so a
point is the same fraction of each: `[198, 740]` in a declared 1024x768 display is `(278, 867)` on a 1440x900
screen and `(557, 1734)` in its 2880x1800 screenshot. Dividing the model's numbers by the screenshot's size
instead (the mistake this module exists to prevent) puts every point wrong, and differently in x and y.

A reader says which space the source's numbers are in (`Space`), `place` gives the schema's normalized point
(`Action.x`, `Action.y`: fractions of the observation) and the entry kept under `point` in the action's `raw`:
the source's own numbers, the space they were in and its size, and the pixel they land on in the observation.
A point outside its space is kept at the screen's edge in the schema fields and said in `raw`
(`outside_screen: true`), where the validation rule `action.point_outside_screen` finds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.record import clamp01


@dataclass(frozen=True)
class Space:
    """A pixel space a run declares: its name (`declared_display`, `logical_screen`, `screenshot`, `screen`)
    and size in pixels."""

    name: str
    width: float
    height: float

    def usable(self) -> bool:
        return bool(self.width) and bool(self.height) and self.width > 0 and self.height > 0


def convert(x: float, y: float, source: Space, target: Space) -> tuple[float, float]:
    """The pixel in `target` that (x, y) in `source` is, scaled per axis as executors do. Raises ValueError
    for a space without a size."""
    if not (source.usable() and target.usable()):
        raise ValueError(f"cannot convert between {source} and {target}: a space without a size")
    return x * target.width / source.width, y * target.height / source.height


def place(x: float, y: float, space: Space, observation: Space | None = None,
          note: str | None = None) -> tuple[float, float, dict]:
    """The normalized point (fractions of the observation, within [0, 1]) of (x, y) given in `space`, and the
    `raw["point"]` entry that keeps the source's numbers. `observation`: the screenshot's or screen's space
    the step observed (its pixel is given when known). Raises ValueError for a space without a size."""
    if not space.usable():
        raise ValueError(f"the point ({x}, {y}) is in {space.name}, whose size is unknown")
    fx, fy = x / space.width, y / space.height
    entry = {"x": x, "y": y, "space": space.name, "width": space.width, "height": space.height}
    if observation is not None and observation.usable() and observation != space:
        px, py = convert(x, y, space, observation)
        entry["observation_pixel"] = [round(px, 2), round(py, 2)]
        entry["observation_space"] = {"name": observation.name, "width": observation.width,
                                      "height": observation.height}
    if note:
        entry["from"] = note
    if not (0 <= fx <= 1 and 0 <= fy <= 1):
        entry["outside_screen"] = True
    return clamp01(fx), clamp01(fy), entry
