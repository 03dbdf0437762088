"""A golden never writes itself: a missing or changed golden fails with the command that rewrites it."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TEST = '''
from tests import goldens

def test_record(tmp_path_factory):
    goldens.check_jsonl(GOLDEN, [{"a": 1}])
'''


def _pytest(tmp_path: Path, golden: Path, *env: str) -> subprocess.CompletedProcess:
    test = tmp_path / "test_uses_golden.py"
    test.write_text(f"GOLDEN = {str(golden)!r}\n" + TEST)
    variables = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", **dict(e.split("=", 1) for e in env)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir",
                           str(tmp_path), str(test)], cwd=REPO, capture_output=True, text=True, env=variables)


def test_a_deleted_golden_fails_with_the_command_that_writes_it_and_writes_nothing(tmp_path):
    golden = tmp_path / "golden" / "record.jsonl"
    missing = _pytest(tmp_path, golden)
    assert missing.returncode == 1, missing.stdout
    assert "golden file" in missing.stdout and "is missing" in missing.stdout
    assert "TRAJFORGE_REGEN_GOLDENS=1 .venv/bin/pytest 'test_uses_golden.py::test_record'" in missing.stdout
    assert not golden.exists()
    # the command writes it; then it passes, and a change fails with a diff
    assert _pytest(tmp_path, golden, "TRAJFORGE_REGEN_GOLDENS=1").returncode == 0
    assert golden.read_text() == '{"a": 1}\n'
    assert _pytest(tmp_path, golden).returncode == 0
    golden.write_text('{"a": 2}\n')
    changed = _pytest(tmp_path, golden)
    assert changed.returncode == 1 and '-{"a": 2}' in changed.stdout and '+{"a": 1}' in changed.stdout
    assert golden.read_text() == '{"a": 2}\n'  # left as it was
    # under CI the variable is refused
    ci = _pytest(tmp_path, golden, "TRAJFORGE_REGEN_GOLDENS=1", "CI=true")
    assert ci.returncode == 1 and "set under CI" in ci.stdout and golden.read_text() == '{"a": 2}\n'

