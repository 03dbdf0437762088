"""Real Roo Code files from public repositories, read by the Cline reader: krzychdre/Tumble-Code @ 2912420
(Apache-2.0, a fork of Roo Code), the error diagnostics Roo Code 3.53.0 wrote for a failed `write_to_file`
(`samples/swe/roo-code/krzychdre-tumble-code/`, see its PROVENANCE.md), against a golden a person read against the
raw file; and Extremity/scratchspace @ 7573c059bf651b63b52b1df24d58f512d5b369d4, `ui_messages.json` (AGPL-3.0,
2.2 MB: too large to bundle) -> `../shared/samples/roo-code/extremity-scratchspace/ui_messages.json`, a Roo Code UI
log shared alone (an Architect task writing a migration plan, served through an OpenAI-compatible provider),
checked on what a person read of its opening and its end; and jsboige/jsboige-mcp-servers @ dbe9a89 (MIT), a whole
Roo Code task folder of September 2025 (a subtask in the XML tool era) kept beside the test
(`tests/ingest/swe/data/roo-code-jsboige-mcp-servers/`, see its PROVENANCE.md), against a golden.
"""

from __future__ import annotations

from ingest.record import Episode, Rejected
from ingest.swe import cline
from tests.conftest import REPO
from tests.ingest.golden import check, read_records
from tests.parts import require_shared_sample
from tests.ingest import golden

SAMPLE = REPO / "samples" / "swe" / "roo-code" / "krzychdre-tumble-code" / "file-clear-error-2.md"
EXTREMITY = REPO.parent / "shared" / "samples" / "roo-code" / "extremity-scratchspace" / "ui_messages.json"
GOLDEN = REPO / "tests" / "ingest" / "swe" / "golden"
MODEL = "unsloth/GLM-5.1-GGUF:UD-IQ2_XXS"
LEAF = REPO / "tests" / "ingest" / "swe" / "data" / "roo-code-jsboige-mcp-servers" / "8c06d62c-1ee2-4c3a-991e-c9483e90c8aa"


def test_a_diagnostics_file_shared_under_another_name_is_claimed_and_read_whole():
    """Read by hand against the file: the task from `<user_message>`; 16 model turns with reasoning, 23 native
    calls in order (several turns call two), each result the observation of the step after its call; the first
    run of the script exits 2, later commands exit 0; `write_to_file` fails inside the extension (its error is
    the result); the history ends on a command's result, where the error stopped the task: not terminated. The
    model of every turn is the one its environment details name; the error is kept as the diagnostics."""
    assert cline.units([str(SAMPLE)], golden.head) == [str(SAMPLE)]
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


def test_a_real_roo_ui_log_shared_alone_is_read_as_roo_codes():
    """Its first record is the task (`# Task 6M — 0.4.4 Preview Migration Plan`, a research and planning task);
    its requests name their `apiProtocol` (Roo Code's) and carry usage only; it ends on the completion, the
    user's follow-up and two failed condensings of a context over the model's window."""
    path = require_shared_sample(EXTREMITY)
    assert cline.units([str(path)], golden.head) == [str(path)]
    records = read_records(cline, path)
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task.startswith("# Task 6M — 0.4.4 Preview Migration Plan\n\nThis is a **research and planning")
    roo = ep.env["roo_code"]
    assert roo["usage"]["tokensIn"] > 105597 and roo["completion"].startswith("Task 6M plan is complete")
    assert [e["say"] for e in roo["errors"][-2:]] == ["condense_context_error"] * 2
    assert "exceeds the available context size" in roo["errors"][-1]["text"]
    assert any(s.action.tool_name == "ask_followup_question" for s in ep.steps)
    assert [r for r in records if isinstance(r, Rejected) and r.rule != "unknown_content"] == []


def test_a_real_roo_task_folder_of_the_xml_era_reads_as_its_two_turns():
    """Read by hand against the folder: the task from `<task>`; turn 1 writes `test-b1a.py` (`write_to_file`, its
    path and content as arguments) and starts an `attempt_completion` Roo Code cut and did not run (kept in the
    turn's text, not an action); the write result and Roo Code's note that the second tool was not executed are
    the next observation; turn 2 is the completion, the end of the task. The model is the one the environment
    details name; each turn's reasoning is the one the UI log showed before it (the history keeps none); usage is
    the UI log's last request; `files_in_context` comes from `task_metadata.json`."""
    assert cline.units([str(LEAF / n) for n in ("api_conversation_history.json", "task_metadata.json",
                                                 "ui_messages.json")], golden.head) == [str(LEAF)]
    records = read_records(cline, LEAF)
    check(records, GOLDEN / "roo-code-jsboige-leaf-task.json", env_keys=("roo_code",))
    assert [r for r in records if isinstance(r, Rejected)] == []
    (ep,) = [r for r in records if isinstance(r, Episode)]
    assert ep.task.startswith("TEST-LEAF-B1a: Crée le fichier mcp-debugging/test-data/test-b1a.py") and ep.terminated
    assert [(s.action.kind, s.action.tool_name) for s in ep.steps] == [("tool_call", "write_to_file"),
                                                                         ("done", "attempt_completion")]
    assert ep.agent == "anthropic/claude-sonnet-4" and ep.steps[0].timestamp.isoformat() == "2025-09-25T17:00:33.367000+00:00"
    assert ep.steps[0].reasoning.startswith("L'utilisateur me demande de créer un fichier spécifique")
    assert "[Response interrupted by a tool use result" in ep.steps[0].reasoning  # the turn's text follows it
    assert ep.steps[1].reasoning.startswith("Le fichier a été créé avec succès.")
    assert ep.steps[1].observation.text.startswith("<file_write_result>\n<path>mcp-debugging/test-data/test-b1a.py")
    assert "Tool [attempt_completion] was not executed" in ep.steps[1].observation.text
    roo = ep.env["roo_code"]
    assert roo["usage"] == {"tokensIn": 57214, "tokensOut": 395, "cacheWrites": 0, "cacheReads": 0, "cost": 0.2314935}
    assert roo["modes"] == ["code"] and roo["files_in_context"][0]["path"] == "mcp-debugging/test-data/test-b1a.py"
    assert roo["reasoning_from_ui"] == 2 and "ui_reasoning_unplaced" not in roo
