"""A real Roo Code file from a public repository, read by the Cline reader against a golden a person read against
the raw file: krzychdre/Tumble-Code @ 2912420 (Apache-2.0, a fork of Roo Code), the error diagnostics Roo Code
3.53.0 wrote for a failed `write_to_file` (`samples/swe/roo-code/krzychdre-tumble-code/`, see its PROVENANCE.md).
"""

from __future__ import annotations

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.conftest import REPO
from tests.ingest.golden import check, read_records

SAMPLE = REPO / "samples" / "swe" / "roo-code" / "krzychdre-tumble-code" / "file-clear-error-2.md"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"
MODEL = "unsloth/GLM-5.1-GGUF:UD-IQ2_XXS"


def _head(path) -> bytes:
    with open(path, "rb") as f:
        return f.read(4096)


def test_a_diagnostics_file_shared_under_another_name_is_claimed_and_read_whole():
    """Read by hand against the file: the task from `<user_message>`; 16 model turns with reasoning, 23 native
    calls in order (several turns call two), each result the observation of the step after its call; the first
    run of the script exits 2, later commands exit 0; `write_to_file` fails inside the extension (its error is
    the result); the history ends on a command's result, where the error stopped the task: not terminated. The
    model of every turn is the one its environment details name; the error is kept as the diagnostics."""
    assert cline.units([str(SAMPLE)], _head) == [str(SAMPLE)]
    records = read_records(cline, SAMPLE)
    check(records, GOLDEN / "roo-code-tumble-diagnostics.json", env_keys=("roo_code",))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task == "run ./self-host-cloud-backend-run.sh and analyze errors" and not ep.terminated
    assert len(ep.steps) == 23 and ep.agent == MODEL and "model_per_step" not in ep.env  # one model throughout
    commands = [i for i, s in enumerate(ep.steps) if s.action.kind == "command"]
    assert ep.steps[commands[0]].action.code == "bash ./self-host-cloud-backend-run.sh 2>&1"
    assert ep.steps[commands[0] + 1].observation.exit_code == 2
    (write,) = [i for i, s in enumerate(ep.steps) if s.action.tool_name == "write_to_file"]
    assert "Cannot read properties of undefined (reading 'clear')" in ep.steps[write + 1].observation.text
    assert ep.final_observation.exit_code == 0
    assert ep.env["roo_code"]["diagnostics"]["version"] == "3.53.0" and ep.env["roo_code"]["modes"] == ["code"]
