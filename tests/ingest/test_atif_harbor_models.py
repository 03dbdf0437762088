"""Harbor's own ATIF models as the oracle, at two releases side by side: 0.1.24 (the first with ATIF-v1.5) and
0.26.0 (ATIF-v1.8), each in its own Python 3.12 environment (`.venv/producers/harbor-<version>`, built by
`make setup-test`), run as a subprocess (`tests/ingest/atif_oracle.py`).

For each release: every trajectory `pipelines export atif` writes validates with its `Trajectory` model; every
real trajectory we read (bundled, and ../shared/samples when present) whose schema version the release knows
validates too; and the actions we read are the ones Harbor's model reads: one per tool call of each agent
turn that is not copied context (a turn without calls is one message action).
"""

import json
import subprocess
from pathlib import Path

import fsspec
import pytest

from ingest import atif
from ingest.source import Source
from tests.conftest import REPO, SAMPLES
from tests.parts import require

ORACLE = Path(__file__).parent / "atif_oracle.py"
RELEASES = {"0.1.24": "ATIF-v1.5", "0.26.0": "ATIF-v1.8"}  # release -> the newest schema its model accepts
SHARED_TRIALS = REPO.parent / "shared" / "samples" / "atif" / "harbor-terminus-2"


def _oracle(version: str, paths: list[Path]) -> dict:
    python = REPO / ".venv" / "producers" / f"harbor-{version}" / "bin" / "python"
    require(f"Harbor {version}'s ATIF models (a Python 3.12 environment)", python.exists(),
            "make setup-test builds .venv/producers/harbor-<version>")
    out = subprocess.run([str(python), str(ORACLE), *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def _real_trajectories() -> list[Path]:
    """The real ATIF files we read: Harbor's goldens, the bundled Claude Code trial, the shared real trials."""
    found = sorted((SAMPLES / "atif").rglob("*.json"))
    found = [p for p in found if b'"ATIF-v' in p.read_bytes()[:300]]
    if SHARED_TRIALS.is_dir():
        found += sorted(SHARED_TRIALS.glob("*/agent/trajectory.json"))
    return found


def _version(path: Path) -> str:
    return json.loads(path.read_text())["schema_version"]


def _key(schema: str) -> tuple[int, ...]:
    return tuple(int(x) for x in schema.removeprefix("ATIF-v").split("."))


@pytest.mark.parametrize("version", RELEASES)
def test_what_export_atif_writes_validates_with_harbors_model(version, run, lake, tmp_path):
    from pipelines.stages.export_atif import export_atif
    from pipelines.infra.lake import Lake
    run("ingest-swe", [SAMPLES / "swe", SAMPLES / "atif"])
    summary = export_atif(Lake(lake), None, "swe", str(tmp_path / "out"))
    files = [tmp_path / "out" / shard["path"] for shard in summary["shards"]]
    assert len(files) == summary["episodes"] == 22  # the samples' swe and atif episodes (tests/ingest/test_atif.py)
    verdicts = _oracle(version, files)
    assert {path: v.get("error") for path, v in verdicts.items() if "error" in v} == {}


@pytest.mark.parametrize("version", RELEASES)
def test_real_trajectories_validate_and_we_read_the_actions_harbor_reads(version):
    files = _real_trajectories()
    assert len(files) >= 8  # 7 Harbor goldens and the Claude Code trial (and the shared trials when present)
    known = [p for p in files if _key(_version(p)) <= _key(RELEASES[version])]
    verdicts = _oracle(version, known)
    refused = {Path(path).name: v["error"] for path, v in verdicts.items() if "error" in v}
    if version == "0.1.24":
        # Harbor 0.1.31's OpenHands writer added `agent.tool_definitions` still calling it ATIF-v1.5, and the
        # first v1.5 release's model forbids that field: one schema version, two shapes (we read both)
        assert list(refused) == ["hello-world.trajectory.json"]
        assert refused["hello-world.trajectory.json"].startswith(
            "1 validation error for Trajectory agent.tool_definitions Extra inputs are not permitted")
    else:
        assert refused == {}
    compared = 0
    for path in known:
        if "error" in verdicts[str(path)]:
            continue
        harbor_steps = verdicts[str(path)]["steps"]
        doc = json.loads(path.read_text())
        if any((s.get("extra") or {}).get("is_sidechain") for s in doc["steps"]):
            continue  # Claude Code sidechains leave the main line by design (test_atif_harbor.py)
        ours = [r for r in atif.read(Source(fs=fsspec.filesystem("file"), path=str(path), uri=path.name,
                                            put_blob=lambda *a: "sha256:0")) if isinstance(r, atif.Episode)]
        expected = [tool for s in harbor_steps if s["source"] == "agent" and not s["copied"]
                    for tool in (s["tools"] or [None])]
        assert [s.action.tool_name for s in ours[0].steps] == expected, path.name
        compared += 1
    assert compared >= (6 if version == "0.1.24" else 7)
