"""Geometry for the small SVG charts the templates draw. Labels stay plain text: the template escapes them."""

from __future__ import annotations

from dataclasses import dataclass, field

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac"]
ROW_H, BAR_W, LABEL_W = 22, 320, 170


@dataclass
class Segment:
    key: str
    value: int
    x: float
    width: float
    color: str


@dataclass
class Row:
    label: str
    total: int
    y: float
    end: float  # x where the row's bars end (the total is written there)
    segments: list[Segment]


@dataclass
class Chart:
    title: str
    rows: list[Row]
    legend: list[tuple[str, str]] = field(default_factory=list)  # (key, color), for stacked charts
    width: int = LABEL_W + BAR_W + 90
    label_w: int = LABEL_W
    row_h: int = ROW_H

    @property
    def height(self) -> int:
        return ROW_H * len(self.rows) + 4


def stacked(title: str, rows: list[tuple[str, dict[str, int]]], legend: bool = True) -> Chart:
    """One horizontal bar per row, split by key; all rows on one scale, the largest total BAR_W wide."""
    keys = sorted({k for _, parts in rows for k in parts})
    color = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(keys)}
    top = max((sum(parts.values()) for _, parts in rows), default=0) or 1
    out = []
    for i, (label, parts) in enumerate(rows):
        x, segments = float(LABEL_W), []
        for k in keys:
            if parts.get(k):
                w = max(BAR_W * parts[k] / top, 1.0)
                segments.append(Segment(k, parts[k], x, w, color[k]))
                x += w
        out.append(Row(str(label), sum(parts.values()), i * ROW_H + 2, x, segments))
    return Chart(title, out, [(k, color[k]) for k in keys] if legend else [])


def bars(title: str, items: list[tuple[str, int]]) -> Chart:
    """Horizontal bars, one per (label, value)."""
    return stacked(title, [(label, {"": value}) for label, value in items], legend=False)


def steps_histogram(buckets: list[dict]) -> Chart:
    """Episodes per steps bucket; bucket b holds 2^(b-1) < steps <= 2^b (b = 0: one step or none)."""
    def label(b: int) -> str:
        lo, hi = (2 ** (b - 1) + 1 if b else 0), 2 ** b
        return f"{hi} steps" if lo == hi else f"{lo}-{hi} steps"
    return bars("episodes by number of steps", [(label(b["bucket"]), b["n"]) for b in buckets])
