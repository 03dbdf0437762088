"""The view's small pure parts: blob references and paths, action marks, chart geometry, the command's
argument checks."""

from __future__ import annotations

import argparse
import socket

import pytest

from pipelines.cli import view as view_cli
from pipelines.infra.lake import Lake
from pipelines.view import charts, files, marks

HEX = "ab" * 32


def test_blob_references_are_64_lowercase_hex_digits():
    assert files.parse_ref(f"sha256:{HEX}") == HEX and files.parse_ref(HEX) == HEX
    for bad in ["sha256:zzz", f"sha256:{HEX.upper()}", f"sha256:{HEX}/../x", f"md5:{HEX}", HEX[:-1], "", "../../etc"]:
        assert files.parse_ref(bad) is None, bad


def test_a_blob_uri_from_the_table_must_stay_under_blobs():
    assert files.safe_blob_uri(f"blobs/ab/{HEX}.png")
    for bad in [None, "", f"/blobs/ab/{HEX}.png", "blobs/../catalog.duckdb", "blobs/./x", "blobs//x", "blobs",
                "datasets/all/parts/x.parquet", "blobs\\..\\x", "s3://bucket/blobs/x", "blobs/x/.."]:
        assert not files.safe_blob_uri(bad), bad


def test_report_files_stay_inside_the_version_folder():
    lake = Lake("/lake")
    assert files.report_file(lake, "all", 3, "") == "/lake/datasets/all/validation/v3/index.html"
    assert files.report_file(lake, "all", 3, "static/a.css") == "/lake/datasets/all/validation/v3/static/a.css"
    for dataset, rel in [("all", "../v2/index.html"), ("all", "a//b"), ("..", "index.html"), ("a/b", "x"),
                         ("all", "a\\..\\b"), ("all", "/etc/passwd")]:
        assert files.report_file(lake, dataset, 3, rel) is None, (dataset, rel)


def test_only_images_and_plain_text_are_served_inline():
    assert files.served_type("image/png") == ("image/png", True)
    assert files.served_type("application/json") == ("text/plain; charset=utf-8", True)
    for risky in ["text/html", "image/svg+xml", "application/javascript", None]:
        assert files.served_type(risky) == ("application/octet-stream", False)


def test_marks_sit_at_normalized_coordinates_in_the_screen_pixels():
    tap = marks.screen({"screenshot": f"sha256:{HEX}", "width": 1080, "height": 2280},
                       {"kind": "tap", "x": 0.25, "y": 0.75})
    assert tap.screenshot == HEX and (tap.width, tap.height) == (1080, 2280)
    assert [(m.kind, m.px, m.py) for m in tap.marks] == [("point", 270.0, 1710.0)]
    swipe = marks.marks({"kind": "swipe", "x": 0.5, "y": 0.8, "x2": 0.5, "y2": 0.2}, 100, 200)
    assert [(m.kind, m.px, m.py, m.px2, m.py2) for m in swipe] == [("path", 50.0, 160.0, 50.0, 40.0)]
    scroll = marks.marks({"kind": "scroll", "x": 0.5, "y": 0.5, "direction": "down"}, 100, 100)
    assert (scroll[0].px2, scroll[0].py2) == (50.0, 65.0)
    assert marks.marks({"kind": "tap", "x": 1.5, "y": 0.5}, 100, 100) == []  # out of range: not drawn
    assert marks.marks({"kind": "type", "text": "hi"}, 100, 100) == []
    assert marks.screen({"kind": "terminal"}, {"kind": "command"}) is None
    blank = marks.screen({"width": 1366, "height": 768}, {"kind": "click", "x": 0.5, "y": 0.5})
    assert blank.screenshot is None and blank.marks[0].px == 683.0  # drawn on an empty screen of that size


def test_charts_scale_bars_to_the_largest_total():
    chart = charts.stacked("q", [("v1", {"a": 2, "b": 2}), ("v2", {"a": 1})])
    assert [k for k, _ in chart.legend] == ["a", "b"]
    first, second = chart.rows
    assert [s.width for s in first.segments] == [charts.BAR_W / 2, charts.BAR_W / 2] and first.total == 4
    assert second.segments[0].width == charts.BAR_W / 4
    histogram = charts.steps_histogram([{"bucket": 0, "n": 1}, {"bucket": 1, "n": 2}, {"bucket": 3, "n": 5}])
    assert [r.label for r in histogram.rows] == ["0-1 steps", "2 steps", "5-8 steps"]


def _args(lake: str, port: int) -> argparse.Namespace:
    return argparse.Namespace(lake=lake, catalog=None, port=port, host="127.0.0.1")


def test_the_command_refuses_a_lake_without_catalog_and_a_busy_port(tmp_path, view_lake):
    with pytest.raises(ValueError, match="no catalog"):
        view_cli.cmd_view(_args(str(tmp_path), 0))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        with pytest.raises(ValueError, match="--port 0 picks a free port"):
            view_cli.cmd_view(_args(view_lake.path, taken.getsockname()[1]))
    finally:
        taken.close()
