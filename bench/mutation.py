"""Mutation testing of the modules whose bugs silently corrupt data: mutmut (3.x) puts small bugs into one
module at a time (a flipped comparison, an off-by-one, a swapped string) and runs that module's tests
against each; a mutant no test notices is a bug the suite would let through.

    make mutation                                  # every module, 10 minutes each
    .venv/bin/python bench/mutation.py dedup export --budget-s 300
    .venv/bin/python bench/mutation.py --list
    .venv/bin/python bench/mutation.py validate --resume     # go on where the budget stopped it
    .venv/bin/python bench/mutation.py validate --recheck    # after adding tests: rerun its survivors only
    .venv/bin/python bench/mutation.py cline --functions read _session     # the mutants of changed functions only

Not part of the tests or CI. Each module runs in its own scratch copy of the repository (mutmut writes its
mutants beside the code), with only the module's own test files, one worker, under `nice -n 19`; a module
stops at its time budget (mutants not reached are counted as such). Prints per module: mutants, killed,
survived, equivalent, not reached, and the score (killed / mutants reached, equivalents left out), then each
survivor's diff. mutmut 3 mutates code inside functions only: module-level constants are not mutated, nor
are decorated functions (the lru_cache'd ones). Tests that build a lake per run are left out of a module's
selection (`deselect`) where unit tests beside them cover the same code: a mutant runs in seconds, not minutes.
The readers are measured on tests that call the reader itself (`tests/ingest/**/test_*_read.py`), and a module
may count the mutants of named functions only (`functions`: the map and reduce of pipelines/stages/dedup.py, whose
stage around them only lake-building tests reach); such a module, and a run given `--functions`, runs those
functions' mutants only. Tests whose input a producer writes at test time (`tests/ingest/swe/coding_clis.py`) find
the producers in the checkout's `.venv/producers`, and run once per test session: the mutants forked from it share
what they wrote.

Why mutmut rather than cosmic-ray: mutmut forks each mutant from a process that has imported the project and
pytest once and runs only the tests that reach the mutated function (measured in a first pass), where
cosmic-ray starts the whole test command per mutant; with pyarrow, duckdb and polars to import, that is
seconds per mutant here. mutmut also resumes where a run stopped and marks equivalents in the code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ["schemas", "ingest", "transforms", "pipelines", "catalog", "samples"]


@dataclass(frozen=True)
class Module:
    sources: list[str]  # files or folders mutated
    tests: list[str]  # the test files that exercise them
    # tests of those files left out: they build a lake (an ingest run per mutant) and kill nothing the unit
    # tests beside them do not
    deselect: tuple[str, ...] = ()
    # "forkserver" where the tests use polars: its thread pool does not survive a fork from a process that
    # ran polars (mutmut's default forks each mutant from the one that ran the whole suite), and a child
    # spins until its CPU limit, every mutant then counted a timeout
    isolation: str = "fork"
    # where set, only the mutants of these functions ("name", "Class.method") are counted: the others are
    # reached by lake-building tests alone, left out of the selection
    functions: tuple[str, ...] = ()
    # where the tests read what a producer wrote once per test session into a pytest temporary folder (the CLIs'
    # exports): a forked mutant's session (and any other pytest session on the machine) would otherwise delete it
    # as an old temporary folder, and tests fail for a file gone, not for the mutant; its pytest sessions then
    # keep every temporary folder, under a root of the scratch copy's own
    keep_tmp: bool = False


MODULES = {
    # forkserver: minhash caches its seeded constants (lru_cache); forked from the process that ran the suite,
    # a mutant of the code that computes them would find them cached and never run
    "dedup": Module(["transforms/dedup"], ["tests/transforms/dedup"], isolation="forkserver", deselect=(
        "tests/transforms/dedup/test_exact.py",
        "tests/transforms/dedup/test_minhash.py::test_edited_copy_is_a_near_duplicate_and_unrelated_trajectory_"
        "is_not")),
    # the map and the reduce, by their unit tests: the stage around them (dedup_stage, the rewrite of part groups
    # and branches) is reached only by tests that build a lake per run (test_dedup.py, test_dedup_threshold.py)
    "pipelines-dedup": Module(["pipelines/stages/dedup.py"], ["tests/pipelines/test_dedup_reduce.py"], isolation="forkserver",
                              functions=("map_signatures", "episode_texts", "MapJob.params", "MapJob.sidecar",
                                         "sketch_group", "_rows", "duplicates_of", "_shingles_of",
                                         "_quarantine_rows", "_with")),
    "export": Module(["transforms/export/splits.py", "transforms/export/rl.py", "transforms/export/budget.py",
                      "transforms/export/cpt.py"],
                     ["tests/transforms/export", "tests/pipelines/test_export.py",
                      "tests/pipelines/test_export_choices.py"]),
    # the rules only: gx.py (great-expectations suites, seconds to import) is exercised by pipeline tests alone
    "validate": Module([f"transforms/validate/{f}.py" for f in ("check", "rules", "invariants", "branches",
                                                                 "contract", "consistency")],
                       ["tests/transforms/validate"], isolation="forkserver"),
    "scrub": Module(["transforms/scrub.py"], ["tests/transforms/test_scrub.py", "tests/transforms/test_scrub_edges.py",
                                               "tests/transforms/test_scrub_texts.py",
                                               "tests/pipelines/test_ingest_scrub.py"]),
    # the key columns are tested on tables built in-process (test_canonicalize.py, test_exact_edges.py): the
    # dedup tests that ingest a lake (test_exact.py, test_minhash.py) test them again at minutes per mutant
    "canonicalize": Module(["transforms/canonicalize.py"], ["tests/transforms/test_canonicalize.py",
                                                            "tests/transforms/dedup/test_exact_edges.py"]),
    "label-parse": Module(["transforms/label/parse.py"], ["tests/transforms/label"]),
    "arrow": Module(["ingest/arrow.py"], ["tests/ingest/test_arrow.py"]),
    "times": Module(["ingest/times.py"], ["tests/ingest/test_png_times.py", "tests/ingest/test_times_edges.py"]),
    # the reader called directly (test_asciicast_read.py holds the pipeline tests' casts): an ingest run per
    # mutant costs seconds, and its validate stage uses polars (a fork server then)
    "asciicast": Module(["ingest/ubuntu/asciicast.py"], [
        "tests/ingest/ubuntu/test_asciicast_read.py", "tests/ingest/ubuntu/test_asciicast_replay.py",
        "tests/ingest/ubuntu/test_asciicast.py::test_units_are_cast_files",
        "tests/ingest/ubuntu/test_asciicast_echo.py::test_real_recordings_without_input_match_the_golden",
        "tests/ingest/ubuntu/test_asciicast_echo.py::test_recordings_with_input_read_the_same_commands_once_their_"
        "input_is_removed"]),
    # the readers' time / action / outcome mappings, each called directly (an ingest run per mutant costs seconds)
    "droidbot": Module(["ingest/android/droidbot.py"], ["tests/ingest/android/test_droidbot_read.py",
                                                        "tests/ingest/android/test_droidbot_sizes_read.py",
                                                        "tests/ingest/android/test_droidbot_kea_real.py",
                                                        "tests/ingest/android/test_droidbot_runs_real.py",
                                                        "tests/ingest/android/test_droidbot.py::test_units_are_run_"
                                                        "directories"]),
    "androidworld": Module(["ingest/android/androidworld.py", "ingest/android/json_action.py"],
                           ["tests/ingest/android/test_androidworld_read.py",
                            "tests/ingest/android/test_json_action.py",
                            "tests/ingest/android/test_androidworld.py::test_units_are_gzipped_pickles"]),
    "minisweagent": Module(["ingest/swe/minisweagent.py"], [
        "tests/ingest/swe/test_minisweagent_read.py",
        "tests/ingest/swe/test_minisweagent.py::test_units_claim_trajectories_by_their_format_and_the_instance_"
        "folder_with_its_report",
        "tests/ingest/swe/test_minisweagent.py::test_an_unreadable_file_is_one_quarantine_row"]),
    "openhands": Module(["ingest/swe/openhands.py"], ["tests/ingest/swe/test_openhands_read.py",
                                                      "tests/ingest/swe/test_openhands.py::test_units_want_an_event_"
                                                      "array"]),
    # the ATIF reader (Harbor trials, our own export, subagents) called directly; the tests that ingest a lake
    # (test_atif.py, the Harbor trial tests with run/query) read the same files through a pipeline
    "atif": Module(["ingest/atif.py"], [
        "tests/ingest/test_atif_read.py",
        *(f"tests/ingest/test_atif_harbor.py::test_{t}" for t in (
            "interleaved_sidechains_of_atif_1_7_become_one_episode_per_subagent",
            "only_parallel_calls_lose_their_timestamp_a_real_step_back_keeps_it",
            "malformed_records_are_quarantined_with_file_record_and_field",
            "a_malformed_restored_record_of_our_export_is_quarantined",
            "units_are_trial_folders_and_loose_atif_files")),
        *(f"tests/ingest/test_atif_v15.py::test_{t}" for t in (
            "openhands_golden_finishes_and_keeps_its_system_prompt",
            "embedded_subagent_trajectories_are_episodes_linked_both_ways", "real_terminus2_trials_match_the_golden")),
        "tests/ingest/test_atif.py::test_units_need_the_atif_schema_version",
        "tests/ingest/test_atif_harbor_codex_real.py"]),
    "codex": Module(["ingest/swe/codex.py"], ["tests/ingest/swe/test_codex_read.py", "tests/ingest/swe/test_codex.py"]),
    "claude-code": Module(["ingest/swe/claude_code.py"], ["tests/ingest/swe/test_claude_code_read.py",
                                                          "tests/ingest/swe/test_claude_code.py"]),
    # the SDK's own run (`sdk_run`, a real producer) is left out: its outputs are cached across forked mutants
    "openhands-v1": Module(["ingest/swe/openhands_v1.py"], [
        "tests/ingest/swe/test_openhands_v1_read.py",
        *(f"tests/ingest/swe/test_openhands_v1.py::test_{t}" for t in (
            "units_are_conversation_folders", "golden_real_gpt_4o_mini_conversation",
            "a_finished_conversation_that_ends_on_the_models_reply_is_terminal"))]),
    # the tests of logs that Inspect itself wrote here (`logs`, `read_with_inspect`: a real producer) are left out
    "inspect-log": Module(["ingest/inspect_log.py"], [
        "tests/ingest/test_inspect_log_read.py",
        "tests/ingest/test_inspect_log.py::test_pooled_attachments_images_and_unknown_parts",
        "tests/ingest/test_inspect_log.py::test_a_log_without_samples_and_a_broken_sample",
        "tests/ingest/test_inspect_log_real.py::test_real_log_reads_as_a_person_counts_it",
        "tests/ingest/test_inspect_log_real.py::test_bundled_log_details",
        "tests/ingest/test_inspect_log_real.py::test_metr_log_tool_results_follow_their_calls"]),
    # the core every chat-shaped reader adapts to, with the readers' direct tests on real runs
    "transcript": Module(["ingest/transcript.py"], [
        "tests/ingest/test_transcript.py", "tests/ingest/test_transcript_edges.py",
        "tests/ingest/swe/test_minisweagent.py::test_golden_real_2x_toolcall_run_stopped_by_a_provider_error",
        "tests/ingest/swe/test_openhands_v1.py::test_golden_real_gpt_4o_mini_conversation",
        "tests/ingest/swe/test_openhands_v1.py::test_a_finished_conversation_that_ends_on_the_models_reply_is_"
        "terminal", "tests/ingest/test_transcript_calls.py"]),
    # readers called directly on their bundled real files and hand-made edge cases (test_*_read.py)
    "sweagent": Module(["ingest/swe/sweagent.py"], ["tests/ingest/swe/test_sweagent_read.py"]),
    "mcp": Module([f"ingest/mcp/{f}.py" for f in ("jsonrpc", "proxy_log", "audit_log", "call_log", "sdk_calls")],
                  [f"tests/ingest/mcp/test_{f}_read.py" for f in ("jsonrpc", "proxy_log", "audit_log", "sdk_calls")]
                  + ["tests/ingest/mcp/test_sdk_calls.py::test_units_sniff_sdk_records_only",
                     "tests/ingest/mcp/test_sdk_calls.py::test_wire_shape_keeps_free_form_json_as_written",
                     "tests/ingest/mcp/test_proxy_log.py::test_tagged_request_logs_with_only_params_and_results",
                     "tests/ingest/mcp/test_audit_log.py::test_call_logs_one_tool_call_per_line"]),
    "agentworldbench": Module(["ingest/agentworldbench.py"], ["tests/ingest/test_agentworldbench_read.py"]),
    "terminal-bench": Module(["ingest/ubuntu/terminal_bench.py"], [
        "tests/ingest/ubuntu/test_terminal_bench_read.py",
        "tests/ingest/ubuntu/test_terminal_bench.py::test_rich_line_breaks_are_undone",
        "tests/ingest/ubuntu/test_terminal_bench_trial.py::test_real_trial_steps_agree_with_the_log_and_the_pane"]),
    "osworld": Module(["ingest/ubuntu/osworld.py"], [
        "tests/ingest/ubuntu/test_osworld_read.py",
        "tests/ingest/ubuntu/test_osworld.py::test_pyautogui_calls_to_typed_actions"]),
    # the browser, Android and macOS readers called directly (an ingest run per mutant costs seconds)
    "har": Module(["ingest/browser/har.py"], [
        "tests/ingest/browser/test_har_read.py",
        "tests/ingest/browser/test_har_big.py::test_a_file_over_the_budget_is_streamed_with_the_steps_a_whole_parse_"
        "gives",
        "tests/ingest/browser/test_har_big.py::test_a_document_cut_short_keeps_the_entries_before_the_damage",
        "tests/ingest/browser/test_har_cdp.py::test_detection_reads_content_not_names"]),
    "cdp": Module(["ingest/browser/cdp.py"], ["tests/ingest/browser/test_cdp_read.py",
                                              "tests/ingest/browser/test_har_cdp.py::test_detection_reads_content_"
                                              "not_names"]),
    "playwright-trace": Module(["ingest/browser/playwright_trace.py"], [
        "tests/ingest/browser/test_playwright_trace_read.py",
        "tests/ingest/browser/test_playwright_trace.py::test_api_calls_map_to_the_action_vocabulary",
        "tests/ingest/browser/test_playwright_trace.py::test_trace_detection_sniffs_the_first_member"]),
    "browsergym": Module(["ingest/browser/browsergym.py"], [
        "tests/ingest/browser/test_browsergym_read.py",
        *(f"tests/ingest/browser/test_browsergym.py::test_{t}" for t in (
            "browsergym_allowlist_maps_its_classes_to_plain_data", "browsergym_action_syntax_is_parsed_never_evaluated",
            "units_are_experiment_folders_with_gzip_step_files", "a_damaged_experiment_folder_is_still_claimed",
            "actions_whose_arguments_do_not_fit_stay_code_actions",
            "the_files_of_an_experiment_folder_the_reader_leaves_are_listed_with_why"))]),
    "getevent-uiautomator": Module(["ingest/android/getevent.py", "ingest/android/uiautomator.py"], [
        "tests/ingest/android/test_getevent_read.py", "tests/ingest/android/test_uiautomator_read.py",
        "tests/ingest/android/test_getevent.py::test_units_sniff_event_lines",
        "tests/ingest/android/test_uiautomator.py::test_units_sniff_content_and_keep_nested_folders_apart"]),
    "aitw-androidcontrol": Module(["ingest/android/aitw.py", "ingest/android/androidcontrol.py"], [
        "tests/ingest/android/test_aitw_read.py", "tests/ingest/android/test_androidcontrol_read.py",
        "tests/ingest/android/test_aitw.py::test_units_sniff_tfrecords_by_feature_names",
        "tests/ingest/android/test_androidcontrol.py::test_units_claim_android_control_files"]),
    "agentnet": Module(["ingest/macos/agentnet.py", "ingest/macos/agentnet_recording.py"], [
        "tests/ingest/macos/test_agentnet_read.py", "tests/ingest/macos/test_agentnet_recording_read.py"]),
    # the coordinate model every GUI reader places its points with
    "coords": Module(["ingest/coords.py"], ["tests/ingest/test_coords.py"]),
    # the shape reader's core (which shape a list is, the message dialects, the document walk), by its direct tests
    "chat": Module(["ingest/chat/shapes.py", "ingest/chat/messages.py", "ingest/chat/by_shape.py"],
                   ["tests/ingest/chat/test_by_shape_read.py"]),
    # the span model the trace readers share and the OTLP reader on it; the OpenAI Agents reader's direct tests
    # reach the span model too, test_spans_read.py calls it on spans built in-process (the producers' own runs,
    # test_*_producer.py, are left out)
    "traces": Module(["ingest/traces/spans.py", "ingest/traces/otel.py"],
                     ["tests/ingest/traces/test_otel_read.py", "tests/ingest/traces/test_openai_agents_read.py",
                      "tests/ingest/traces/test_spans_read.py"]),
    # the coding CLIs' readers called directly, on their real recordings and hand-made edge cases (the CLIs' own
    # runs, test_*_cli.py, are left out)
    # Roo Code's task folders are read by the Cline reader (test_roo_code.py, but for its check of the folders
    # against Roo Code's own schemas, which runs node); test_cline_read.py reads what the Cline CLI wrote (task
    # folders of 2.18.0, a 3.0.65 session) kept beside it
    "cline": Module(["ingest/swe/cline.py", "ingest/swe/cline_ui.py"], [
        "tests/ingest/swe/test_cline_read.py", "tests/ingest/swe/test_cline.py", "tests/ingest/swe/test_cline_real.py",
        "tests/ingest/swe/test_cline_ui.py",
        "tests/ingest/swe/test_roo_code_real.py",
        *(f"tests/ingest/swe/test_roo_code.py::test_{t}" for t in (
            "a_native_roo_code_task_reads_its_calls_models_modes_and_exit_codes",
            "a_roo_code_task_of_the_xml_era_is_told_from_cline_by_its_environment_details",
            "condensed_messages_are_read_as_sent_and_counted", "a_roo_command_killed_by_a_signal_has_no_exit_code",
            "a_cline_folder_stays_cline", "a_diagnostics_file_reads_the_history_it_holds_and_keeps_the_error",
            "a_fork_naming_its_own_maintainers_is_claimed_and_other_comments_are_not",
            "a_diagnostics_field_roo_code_does_not_write_is_kept_raw_with_a_warning",
            "a_diagnostics_file_without_a_history_or_broken_is_rejected_naming_it",
            "a_diagnostics_error_that_is_no_object_or_names_no_model_leaves_the_model_to_the_history",
            "history_blocks_roo_code_does_not_write_are_kept_raw_with_a_warning",
            "a_diagnostics_file_over_the_record_budget_is_refused_not_parsed",
            "a_diagnostics_file_of_an_empty_history_is_an_empty_episode_row_naming_it",
            "a_completion_the_user_answered_before_the_error_does_not_end_the_task",
            "a_roo_code_task_folder_keeps_history_blocks_roo_code_does_not_write_raw_with_a_warning",
            "reasoning_shown_in_the_ui_log_alone_goes_to_the_turn_saved_after_it",
            "the_historys_own_reasoning_wins_over_the_ui_logs"))]),
    "aider": Module(["ingest/swe/aider.py"], ["tests/ingest/swe/test_aider.py"]),
    # the reader called on the exports the CLI itself wrote (made once per test session, shared by the forked
    # mutants) and on hand-made edge cases; the ingest run of the exports builds a lake
    "qwen-code-export": Module(["ingest/swe/qwen_code_export.py"], ["tests/ingest/swe/test_qwen_code_export.py"],
                               deselect=("tests/ingest/swe/test_qwen_code_export.py::test_ingest_reads_the_json_"
                                         "exports_and_lists_the_same_sessions_markdown_as_theirs",), keep_tmp=True),
    # the Jaeger reader called directly (the timeline trace's ingest run builds a lake)
    "jaeger": Module(["ingest/traces/jaeger.py"], ["tests/ingest/traces/test_jaeger_read.py"],
                     deselect=("tests/ingest/traces/test_jaeger_read.py::test_the_timeline_trace_passes_validation_"
                               "through_ingest_all",)),
    "osworld-runners": Module(["ingest/ubuntu/osworld_runners.py"], ["tests/ingest/ubuntu/test_osworld_runners.py"]),
    # the span model's step order where spans overlap (the order events are applied in, a clamped time), by the
    # trace readers' direct tests: the rest of spans.py is measured with otel.py above
    "spans-order": Module(["ingest/traces/spans.py"], [
        "tests/ingest/traces/test_spans_read.py", "tests/ingest/traces/test_otel_read.py",
        "tests/ingest/traces/test_openai_agents_read.py", "tests/ingest/traces/test_jaeger_read.py"],
        deselect=("tests/ingest/traces/test_jaeger_read.py::test_the_timeline_trace_passes_validation_through_"
                  "ingest_all",),
        functions=("_time", "_start_key", "_end_key", "_calling_model", "_events", "_transcript",
                   "_Transcript._not_before")),
    "gemini-cli": Module(["ingest/swe/gemini_cli.py"], ["tests/ingest/swe/test_gemini_cli.py"]),
    # JSON in UTF-16 / UTF-32 / UTF-8 with a mark, decoded where every read of a file passes (read_bytes, read_path,
    # open_stream): the sniff and the decoder, and the reads of ingest/source.py that hand their text on; the ingest
    # runs use polars (validate): a fork server
    "text-encoding": Module(["ingest/text_encoding.py", "ingest/source.py"], [
        "tests/ingest/test_text_encoding.py", "tests/ingest/test_unread.py",
        "tests/ingest/traces/test_jaeger_utf16_real.py",
        *(f"tests/ingest/test_source_guard.py::test_{t}" for t in (
            "a_stream_is_guarded_like_a_read_and_feeds_the_same_digest",
            "a_stream_hands_out_at_most_what_is_asked_and_all_of_it_once",
            "a_stream_of_a_file_that_grew_past_the_budget_stops_naming_the_file_and_its_size",
            "a_file_of_another_filesystem_is_read_and_streamed_with_the_same_decoding_and_budget",
            "a_name_inside_a_file_cannot_lead_out_of_the_input",
            "a_folder_linked_out_of_the_input_is_neither_listed_nor_read",
            "a_listed_file_swapped_after_the_listing_for_a_link_out_or_a_fifo_is_not_read",
            "a_file_whose_size_the_filesystem_does_not_tell_is_read_to_its_end"))],
        isolation="forkserver",
        functions=("sniff", "decoded_head", "_mark", "Decoder.__init__", "Decoder.feed", "Decoder.result",
                   "Decoder._problem", "Decoded.as_env", "to_utf8", "pieces_of", "_read_local", "_decoded", "_fed",
                   "Stream.__init__", "Stream.read", "Stream._sniff", "Stream._raw_read", "Stream.close",
                   "Source._read", "Source._feeder", "Source.open_stream")),
    # OpenCode's `/export` markdown read directly, on the bundled real transcript, hand-made edge cases and the
    # writer cut from each release and run under node (once per test session, shared by the forked mutants)
    "opencode-transcript": Module(["ingest/swe/opencode_transcript.py"],
                                  ["tests/ingest/swe/test_opencode_transcript.py"], keep_tmp=True),
    # Langfuse's trace downloads read directly (the span model's BeeAI ReAct events, the model calls written as
    # one text of `role: content` turns, results written as JSON strings); the other functions of langfuse.py and
    # io_messages.py are measured by the same tests, the counted ones are those the trace downloads of 2025-06 to
    # 2025-12 brought (`role_turns` lies in genai.py, which OpenLit's text prompts share)
    "langfuse": Module(["ingest/traces/langfuse.py", "ingest/traces/io_messages.py", "ingest/traces/beeai.py",
                        "ingest/traces/genai.py"],
                       ["tests/ingest/traces/test_langfuse_read.py", "tests/ingest/traces/test_otel_read.py"],
                       functions=("_target", "_iteration", "_order", "_action", "read_react_events", "role_turns",
                                  "tools_only_answer", "io_messages", "_json_text", "_tool", "_fill")),
    # AndroidWorld's task-runner files (a run's history of replies, UI element lists, the result) read directly,
    # on the bundled UI-TARS run and hand-made edge cases
    "androidworld-history": Module(["ingest/android/androidworld_history.py"],
                                   ["tests/ingest/android/test_androidworld_history.py"]),
    # the replay form of AndroidWorld's JSON results, through the JSON results reader that hands it on
    "androidworld-replay": Module(["ingest/android/androidworld_replay.py"],
                                  ["tests/ingest/android/test_androidworld_json.py"]),
    # Agent TARS (Tarko) runs: the snapshots saved per loop and the model requests beside them, by the reader's
    # direct tests on its real runs and hand-made edge cases
    "tarko": Module(["ingest/chat/tarko_snapshots.py", "ingest/chat/tarko_requests.py"],
                    ["tests/ingest/chat/test_agent_tars.py"]),
    # the shape reader's domain (said by the record, by its tools, or the default) and how a log ends
    "chat-ending": Module(["ingest/chat/by_shape.py"], ["tests/ingest/chat/test_by_shape_ending.py",
                                                        "tests/ingest/chat/test_by_shape_read.py"],
                          functions=("_domain", "_said_domain", "answered", "list_records")),
}

# Mutants that change nothing a caller can observe, by mutmut's name, each with why. (Names follow mutmut's
# numbering within a function: recheck them when the function changes.)
_ARROW_FAST = "a type test that only skips asking pyarrow, which takes the same values"
_SORTED_ONLY = "sorting keys changes the text orjson writes, never whether it can"
_NULL_ANYWAY = "a key left out of a from_pylist row is null, as the None written"
_JSON_ONLY = "a branch's action and state hold JSON types only: orjson needs no default"
_UNIQUE_IDS = "an episode id is one row of a version: unique by id or by whole row alike"
_TAP_FAST_PATH = "the tap rule's text fast path only: a tap it does not prove gets the exact check, which decides alike"
_ROWS_JSON = "episode rows and actions hold JSON types only: orjson needs no default"
_NONE_FALSE = "None and False alike: no step level"
_NULL_CAST = "a null literal of no type: findings() casts every column to String"
_MISSING_NULL = "findings() fills a column the frame lacks with nulls, as the null step_id written"
_NEVER_NULL = "an any() over no rows is false, never null: the fill is never used"
_FALSY = "None is falsy, as the False written"
_INT64 = "numpy's default integer (and float) is the dtype written: int64 (float64) here"
_NEVER_EMPTY = "its callers return before an empty table: the empty branch is never taken"
_CHUNK_EDGES = "chunk edges only (they bound memory): any chunking gives the same sketch (test_minhash.py)"
_RESHAPE = "numpy reads a negative size or None in reshape as the whole array, as -1"
_ORDER_ONLY = "order only: polars keeps a left join's left order here without being asked"
_INFERRED_STRING = "a non-empty list of str (empty is returned early): pyarrow infers string"
_POLARS_STRING = "polars infers String from the str values given"
_ROWS_FRAME = "_rows does not read its frame argument"
_TOKEN_CACHE = "the cache only saves encoding a text again: the same count"
_HASH_ON_RATIO = "a 64-bit hash fraction equals a ratio exactly with chance ~2^-53: < and <= split alike"
_NEXT_COLUMNS = "no check reads the step_index or domain that _with_next keeps (select(None) adds a null column)"
_ASC_FAST = "the terminal's fast path skipped or entered later: pyte's own path leaves the same screen"
_ASC_CACHE = "a cache of cells or SGR results only: missed, the same value is computed again"
_ASC_UTF8 = "pyte's text stream stays in UTF-8 mode, which ignores SO/SI: the charset is always G0"
_ASC_CODEC = "codec names are case-insensitive"
_ASC_NEWLINE = "a final newline leaves an empty last line, which is skipped: the cut-off check sees the same line"
_ASC_UNKNOWN_CSI = ("an unknown CSI final: pyte's debug does nothing, and the TypeError of calling None is caught "
                    "and resets a parser already in its ground state")
_DROIDBOT_NO_STATE = "read() renders a missing state itself: _observation never gets None"
_MINI_INT = "_bad_field left out every message whose returncode is no int (or a bool): None gives None either way"
_OH_NAME = "the call carries its own action and each result its own observation: the call's name is not read"
_ATIF_BRANCH = "_branch catches Malformed and returns None: the record name it would carry is never read"
_ATIF_RUN = "in_run None is falsy, as False"
_ATIF_VERSION = "a missing schema_version: str(None) and 'XXXX' do not start with 'ATIF-' either"
_ATIF_LINK_STEP = "only the links' trajectory_path (or whether there are any) is read, not the step they follow"
_CODEX_GENERIC = ("exec_command and shell_command are shell tools `ingest.tools` maps alike (same argument): the "
                  "core's mapping gives the same command")
_CODEX_WHERE = ("the core reads a message's where only for one it keeps raw: never a system message or a turn with "
                "calls")
_OH1_MODEL = ("one model per conversation (base_state's): the episode's agent either way, and no second model to "
              "list in env.models")
_SWE_LABEL = "every caller passes the label: the default never reaches a reason"
_SWE_ACTION = ("the command is a str orjson read (lone surrogates are refused on reading): only the state or the "
               "tool calls can fail to write, the fallback name is never used")
_SWE_FIRST = ("a history segment's first record is set by its first step (`if not messages`): the value before is "
              "unread")
_SWE_ENV_SPLIT = ("an env value orjson read fails to write by its depth only ('Recursion limit reached', no colon): "
                  "every split of the reason gives the key")
_MCP_JSONRPC = "build_sessions never reads the jsonrpc member of a message a reader rebuilds"
_MCP_REQUEST_TIME = "only requests' times become step times"
_MCP_DIRECTION = "the fallback names the side mentioned first: the same side for each listed label"
_MCP_SDK_SPLIT = ("sessions split by a session id come from SDK captures, whose request ids are unique and which "
                  "have no channels: the index never breaks a tie, the channel is None")
_MCP_OBSERVE = "_observation reads the call's name and response only"
_MCP_NEVER_DONE = ("tool_action never makes a `done` action: the transcript core's terminated (None: the last "
                   "action is done) is False either way")
_LINUX_RUN = "linux is the transcript Run's default platform"
_MCP_SDK_IDS = ("an SDK capture's request ids are unique among the open requests (line, open count): a response "
                "finds its own whatever sides are searched, and the count adds nothing")
_TARKO_XXXX = ("a reply's text is compared by equality: an empty content read as 'XXXX' differs only for a request "
               "whose reply is 'XXXX'")
_TARKO_DIGEST = "digests are compared with each other only: any fixed size tells the same events apart"
_STEP_DEFAULT = "a Step's reasoning (or reward) left out is None, as written"
_EXCHANGE_FAST = ("the inlined placing of a result whose call is known, skipped: `_Builder.tool` places it by the "
                  "same id, with the same extras")
_AWH = "ingest.android.androidworld_history."
_AWR = "ingest.android.androidworld_replay."
_AWH_FIRST_CALL = ("the UI-TARS calls found start at different places (each pattern opens with its own name): "
                   "(start, action) pairs order by their start alone, as the key does")
_AWH_POP = ("a text or description left among the fields is written again, under the same key at the same place, "
            "by the update that adds the other fields")
_HAR_FIRST_READ = ("ijson asks for 0 bytes first, then 1 MiB reads: a first read of 1 to 3 bytes, where these "
                   "differ, never happens")
_HAR_SIZE = "_read_log does not read the size a member comes with"
_HAR_BUF = "the parser's read size: speed only, the same events"
_PW = "ingest.browser.playwright_trace."
_BG = "ingest.browser.browsergym."
_GE = "ingest.android.getevent."
_UA = "ingest.android.uiautomator."
_AI = "ingest.android.aitw."
_AC = "ingest.android.androidcontrol."
_AR = "ingest.macos.agentnet_recording."
_AN = "ingest.macos.agentnet."
_GE_MICROSECONDS = ("getevent prints microseconds: a difference has 6 decimals and float noise far below 1e-7, "
                    "rounded to 6 or 7 alike")
_TE = "ingest.text_encoding."
_SRC = "ingest.source."
_READ_SIZE = "the size of a raw read: speed only, the same bytes"
_SHORT_READ = ("the sniff's loop for short reads: past a first read of more than one byte it only gathers the 64 bytes "
               "the sniff looks at, whatever it asks for")
_CODEC_CASE = "codec names are case-insensitive"
EQUIVALENT: dict[str, str] = {
    **{f"{_SRC}xǁStreamǁ__init____mutmut_{n}": "the sniff sets _held before any read hands bytes out (a read of 0 "
       "returns before it)" for n in (4, 5)},
    f"{_SRC}xǁStreamǁ__init____mutmut_7": _FALSY,
    f"{_SRC}xǁStreamǁread__mutmut_23": "one more piece decoded before handing out: the same bytes in the same order",
    **{f"{_SRC}xǁStreamǁread__mutmut_{n}": _READ_SIZE for n in (31, 32, 33)},
    **{f"{_SRC}xǁStreamǁclose__mutmut_{n}": _READ_SIZE for n in (4, 5)},
    f"{_SRC}xǁStreamǁ_sniff__mutmut_7": "an empty first read is the file's end: the next read is empty too",
    **{f"{_SRC}xǁStreamǁ_sniff__mutmut_{n}": _SHORT_READ for n in (8, 9, 10)},
    **{f"{_SRC}xǁSourceǁopen_stream__mutmut_{n}": ("a buffered file (buffering=1 is not taken in binary mode) reads "
                                                  "the same bytes") for n in (19, 22)},
    f"{_SRC}xǁSourceǁ_feeder__mutmut_1": _FALSY,
    f"{_SRC}xǁSourceǁ_read__mutmut_11": "a listed file opened with the full checks (_open_local): an lstat more",
    f"{_SRC}x__read_local__mutmut_4": "a listed file opened with the full checks (_open_local): an lstat more",
    **{f"{_SRC}x__read_local__mutmut_{n}": "Source._read, the one caller, passes listed and where" for n in (1, 2)},
    f"{_SRC}x__read_local__mutmut_20": "a file of exactly DECODE_WHOLE_BYTES decoded as it is read: the same text",
    **{f"ingest.swe.opencode_transcript.x_{f}__mutmut_{n}": (
        "the core reads a message's where only for one it keeps raw: a turn or a result that follows its call never")
       for f, n in (("_assistant", 13), ("_assistant", 19), ("_tool", 95), ("_tool", 101))},
    **{f"ingest.swe.opencode_transcript.x__tool__mutmut_{n}": "a result without its tool's name takes its call's"
       for n in (92, 98)},
    "ingest.swe.opencode_transcript.x__assistant__mutmut_24": (
        "a turn holds one text part at most: text runs to the next part, a reasoning (whose text runs on) or a call"),
    **{f"ingest.swe.opencode_transcript.x__tool__mutmut_{n}": "find from `at` (past the header) is never 0"
       for n in (47, 48, 53, 54)},
    "ingest.swe.opencode_transcript.x__tool__mutmut_32": (
        "the writer closes the input's fence right after the JSON it wrote (JSON.stringify): raw_decode ends there"),
    "ingest.swe.opencode_transcript.x__tool__mutmut_113": (
        "the early writer closes a call without a result right under its name or input (`\\n```\\n\\n`)"),
    "ingest.swe.opencode_transcript.x__tool__mutmut_122": "the writer puts a blank line after every part: a line end",
    "ingest.swe.opencode_transcript.x__output_end__mutmut_15": (
        "an output opens under a fence line (`...```\\n`): no terminator starts two characters before it"),
    "ingest.swe.opencode_transcript.x__output_end__mutmut_21": (
        "a terminator ends in a blank line and a part opens with `*`, `_` or a backtick: none ends inside a part"),
    **{f"ingest.swe.opencode_transcript.x__output_end__mutmut_{n}": "rfind from `at - 1` (past the label) is never 0"
       for n in (24, 25)},
    **{f"ingest.swe.opencode_transcript.x__next_part__mutmut_{n}": why for n, why in (
        (4, "parts before `start` are skipped by `m.start() > start` all the same"), (8, "a slice from None is from 0"),
        (14, "a part past the second character: body[1:k] ends as body[:k] does"),
        (6, "a reasoning part holds text: no part opens right under `_Thinking:_` (an output opens under a fence)"))},
    **{f"{_SRC}x__read_local__mutmut_{n}": "Source._read passes where: the unit's path in it or its uri, never empty"
       for n in (51, 80)},
    **{f"{_SRC}x__read_local__mutmut_{n}": _READ_SIZE for n in (59, 67, 68)},
    f"{_SRC}x__read_local__mutmut_60": "the read-on loop after a whole first read finds the end at once: same bytes",
    f"{_SRC}xǁSourceǁ_read__mutmut_38": "fsspec opens a file for reading bytes when no mode is named",
    f"{_SRC}xǁSourceǁopen_stream__mutmut_39": "fsspec opens a file for reading bytes when no mode is named",
    **{f"{_SRC}xǁStreamǁread__mutmut_{n}": _READ_SIZE for n in (14, 15)},
    f"{_TE}xǁDecoderǁresult__mutmut_8": "a mark is 2, 3 or 4 bytes: > 1 and > 0 alike",
    f"{_TE}x_to_utf8__mutmut_13": _FALSY,
    "ingest.chat.by_shape.x_answered__mutmut_4": (
        "the shape reader reads no list without a model turn (a person's messages alone are no chat log): next() "
        "always finds one"),
    **{f"ingest.chat.by_shape.x_list_records__mutmut_{n}": (
        "the list's key is read only where a holder's other fields are kept: the last dotted part, however split")
       for n in (32, 36, 39)},
    **{f"ingest.traces.beeai.x__action__mutmut_{n}": (
        "the core reads a message's where only for one it keeps raw: never a model's answer")
       for n in (31, 35, 62, 66)},
    **{f"ingest.traces.beeai.x__action__mutmut_{n}": (
        "the model's call and the tool span are given the same name, id and arguments: the span model takes the one "
        "the other lacks") for n in (39, 41, 44, 49, 50, 51, 54, 55)},
    "ingest.traces.langfuse.x__json_text__mutmut_4": "a JSON text that opens and closes with a quote is a string",
    "ingest.traces.langfuse.x__tool__mutmut_26": "a lone quote is no JSON: _json_text gives it back",
    "ingest.traces.langfuse.x__fill__mutmut_69": "an answer of [] or None alike: no message, the output kept unread",
    f"{_TE}xǁDecoderǁfeed__mutmut_24": _CODEC_CASE,
    f"{_TE}x_decoded_head__mutmut_14": _CODEC_CASE,
    **{f"{_TE}x_decoded_head__mutmut_{n}": ("a UTF-8 head decoded and encoded again is its bytes past the mark, but "
                                            "for a character cut at the head's end, which no claim reads")
       for n in (5, 6)},
    **{f"{_TE}x_pieces_of__mutmut_{n}": "_decoded sniffs first: an empty file is never decoded" for n in (4, 13)},
    f"{_TE}x_pieces_of__mutmut_3": ("a file already held (a remote one, or one of 1 MiB at most) decoded in one "
                                    "piece: the same text, a larger working copy"),
    **{f"{_TE}x_sniff__mutmut_{n}": ("two bytes hold a mark alone or one UTF-16 unit: no `{` or `[` after a mark and "
                                    "no NUL pattern (four bytes), None either way") for n in (2, 3)},
    f"{_TE}x_sniff__mutmut_45": "text opening with an X is no JSON: decoded or not, its reader refuses it",
    "ingest.times.x_parse_time__mutmut_16": "an upper-case Z left in place: fromisoformat reads it (Python >= 3.11)",
    "ingest.times.x_parse_time__mutmut_17": "an upper-case Z left in place: fromisoformat reads it (Python >= 3.11)",
    "transforms.dedup.representative.x_rank__mutmut_16": "any fill but 'success' ranks a missing outcome as failed",
    "transforms.dedup.representative.x_rank__mutmut_17": "any fill but 'success' ranks a missing outcome as failed",
    "transforms.dedup.representative.x_rank__mutmut_33": "a null start sorts last (pyarrow's null placement), as "
                                                         "the int64 maximum does",
    "transforms.export.budget.xǁTokenCounterǁ__init____mutmut_15": "codec names are case-insensitive",
    "transforms.scrub.x_scrub_array__mutmut_6": "a null row screened in or out alike: scrub_text(None) finds nothing",
    "transforms.scrub.x__re2__mutmut_18": "RE2 reads a hex escape in either case: \\x0b is \\x0B",
    "transforms.scrub.x__cookie_lists__mutmut_41": "a fast path only: the cookie-list regex needs '\"cookies\"'",
    "transforms.scrub.x__matching__mutmut_3": "indices_nonzero leaves out a null as it does a false",
    "transforms.scrub.x__matching__mutmut_10": ("a null text passing a rule's screen: its lowered '' holds no "
                                                "needle, so the rule's regex never runs on it"),
    **{f"transforms.scrub.x_{f}__mutmut_{n}": "pyarrow infers int64 from the Python ints of the row numbers"
       for f, n in (("scrub_array", 23), ("scrub_array", 25), ("scrub_texts", 36), ("scrub_texts", 38))},
    "transforms.scrub.x_scrub_texts__mutmut_21": ("`held` is then taken again from the texts as they stand: the "
                                                  "same rows, slower only"),
    "transforms.scrub.x_scrub_texts__mutmut_6": "no needle holds an upper-case letter: 'XXXX' holds none, as '' does",
    "transforms.scrub.x__one_array__mutmut_1": "one chunk copied by combine_chunks holds the same values: slower only",
    "transforms.label.parse.x_parse_output__mutmut_1": "the default finish reason matters only when it is 'length'",
    "transforms.label.parse.x_parse_output__mutmut_2": "the default finish reason matters only when it is 'length'",
    "transforms.label.parse.x_leftover_tags__mutmut_7": "a missing text and 'XXXX' both hold no tag",
    "transforms.label.parse.x_strip_reasoning__mutmut_7": "start == pos appends an empty string",
    "ingest.arrow.x__action_problem__mutmut_18": _ARROW_FAST,
    "ingest.arrow.x__action_problem__mutmut_19": _ARROW_FAST,
    "ingest.arrow.x__observation_problem__mutmut_29": _ARROW_FAST,
    "ingest.arrow.x__observation_problem__mutmut_30": _ARROW_FAST,
    "ingest.arrow.x__is_int32__mutmut_2": _ARROW_FAST,
    "ingest.arrow.x__is_int32__mutmut_4": _ARROW_FAST,
    "ingest.arrow.x__is_int32__mutmut_5": _ARROW_FAST,
    "ingest.arrow.x__typed_problem__mutmut_7": _ARROW_FAST,
    "ingest.arrow.x_episode_problem__mutmut_32": _ARROW_FAST,
    "ingest.arrow.x_step_problem__mutmut_27": _ARROW_FAST,
    "ingest.arrow.x__texts_problem__mutmut_9": _ARROW_FAST,
    "ingest.arrow.x__texts_problem__mutmut_11": _ARROW_FAST,
    "ingest.arrow.x__action_problem__mutmut_25": _ARROW_FAST,
    "ingest.arrow.x__action_problem__mutmut_29": _ARROW_FAST,
    "ingest.arrow.x__action_problem__mutmut_33": _ARROW_FAST,
    "ingest.arrow.x_checked_env__mutmut_2": _SORTED_ONLY,
    "ingest.arrow.x_checked_env__mutmut_4": _SORTED_ONLY,
    "ingest.arrow.x_checked_env__mutmut_10": _SORTED_ONLY,
    "ingest.arrow.x_checked_env__mutmut_12": _SORTED_ONLY,
    "ingest.arrow.x_checked_episode__mutmut_9": _SORTED_ONLY,
    "ingest.arrow.x_checked_episode__mutmut_11": _SORTED_ONLY,
    "ingest.arrow.x_checked_episode__mutmut_3": "None and False both leave the steps out",
    "ingest.arrow.x__text_problem__mutmut_2": "every caller passes the limit",
    "ingest.arrow.xǁTableBuilderǁadd_rejected__mutmut_21": _NULL_ANYWAY,
    "ingest.arrow.xǁTableBuilderǁadd_rejected__mutmut_22": _NULL_ANYWAY,
    "transforms.validate.branches.x_check_branches__mutmut_64": _ORDER_ONLY,
    "transforms.validate.branches.x_check_branches__mutmut_68": _ORDER_ONLY,
    "transforms.validate.branches.x_check_branches__mutmut_85": _POLARS_STRING,
    "transforms.validate.branches.x_check_branches__mutmut_87": _POLARS_STRING,
    "transforms.validate.branches.x_check_branches__mutmut_378": _INFERRED_STRING,
    "transforms.validate.branches.x_check_branches__mutmut_380": _INFERRED_STRING,
    "transforms.validate.branches.x_quarantine_rows__mutmut_21": _INFERRED_STRING,
    "transforms.validate.branches.x_quarantine_rows__mutmut_23": _INFERRED_STRING,
    "transforms.validate.branches.x_quarantine_rows__mutmut_57": _JSON_ONLY,
    "transforms.validate.branches.x_quarantine_rows__mutmut_59": _JSON_ONLY,
    "transforms.validate.branches.x_quarantine_rows__mutmut_95": _NULL_ANYWAY,
    "transforms.validate.branches.x_quarantine_rows__mutmut_96": _NULL_ANYWAY,
    "transforms.validate.branches.x_quarantine_rows__mutmut_104": _NULL_ANYWAY,
    "transforms.validate.branches.x_quarantine_rows__mutmut_105": _NULL_ANYWAY,
    "transforms.validate.check.x_conform_parts__mutmut_73": _ORDER_ONLY,
    "transforms.validate.check.x_conform_parts__mutmut_77": _ORDER_ONLY,
    "transforms.validate.check.x_quarantine_rows__mutmut_22": _ORDER_ONLY,
    "transforms.validate.check.x_quarantine_rows__mutmut_26": _ORDER_ONLY,
    "transforms.validate.check.x_quarantine_rows__mutmut_27": _UNIQUE_IDS,
    "transforms.validate.check.x_quarantine_rows__mutmut_50": _INFERRED_STRING,
    "transforms.validate.check.x_quarantine_rows__mutmut_52": _INFERRED_STRING,
    "transforms.validate.consistency.x__target_key__mutmut_3": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_4": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_5": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_13": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_14": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_16": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_17": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_19": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_24": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_25": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_26": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_30": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_31": _TAP_FAST_PATH,
    "transforms.validate.consistency.x__target_key__mutmut_32": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_86": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_87": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_103": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_110": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_111": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_118": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_119": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_147": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_148": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_150": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_152": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_153": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_158": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_159": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_161": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_166": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_167": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_177": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_178": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_182": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_183": _TAP_FAST_PATH,
    "transforms.validate.consistency.x_check_android_taps__mutmut_131":
        "polars infers String from the needles (str or None); all None, no row takes the needle branch",
    "transforms.validate.consistency.x_check_android_taps__mutmut_134":
        "polars infers String from the needles (str or None); all None, no row takes the needle branch",
    "transforms.validate.consistency.x_check_android_taps__mutmut_139": "polars infers Boolean from the bools given",
    "transforms.validate.consistency.x_check_android_taps__mutmut_142": "polars infers Boolean from the bools given",
    "transforms.validate.consistency.x_check_android_taps__mutmut_242": _ROWS_FRAME,
    "transforms.validate.consistency.x_check_terminal_cwd__mutmut_91": _ROWS_FRAME,
    "transforms.validate.consistency.x_check_tool_results__mutmut_56": _ROWS_FRAME,
    "transforms.validate.consistency.x_check_web_navigation__mutmut_81": _ROWS_FRAME,
    "transforms.validate.consistency.x_check_terminal_cwd__mutmut_56":
        "_cwd of a missing text is None: a pair with one text missing gives no finding either way",
    "transforms.validate.consistency.x_check_terminal_cwd__mutmut_80": "'XXXX' holds no cd-like word, as '' does not",
    "transforms.validate.consistency.x__with_next__mutmut_24": _NEXT_COLUMNS,
    "transforms.validate.consistency.x__with_next__mutmut_25": _NEXT_COLUMNS,
    "transforms.validate.consistency.x__with_next__mutmut_31": _NEXT_COLUMNS,
    "transforms.validate.consistency.x__with_next__mutmut_32": _NEXT_COLUMNS,
    "transforms.validate.consistency.x__with_next__mutmut_37":
        "order only: over() shifts per episode in row order, and sorted by step_index is sorted within each episode",
    "transforms.validate.consistency.x__with_next__mutmut_39":
        "order only: over() shifts per episode in row order, and sorted by step_index is sorted within each episode",
    "transforms.canonicalize.x__long_hex_with_letter__mutmut_5":
        "a first letter at position 7 is the last alternative's ([0-9]{7,}[a-fA-F]...) already",
    "transforms.validate.check.x_quarantine_rows__mutmut_143": _NULL_ANYWAY,
    "transforms.validate.check.x_quarantine_rows__mutmut_144": _NULL_ANYWAY,
    "transforms.validate.check.x_quarantine_rows__mutmut_161": _NULL_ANYWAY,
    "transforms.validate.check.x_quarantine_rows__mutmut_162": _NULL_ANYWAY,
    "transforms.validate.check.x_quarantine_rows__mutmut_157": _ROWS_JSON,
    "transforms.validate.check.x_quarantine_rows__mutmut_159": _ROWS_JSON,
    "transforms.validate.check.x_validate__mutmut_41": _POLARS_STRING,
    "transforms.validate.check.x_validate__mutmut_43": _POLARS_STRING,
    "transforms.validate.check.x__source_severities__mutmut_1":
        "an empty findings frame joins to an empty one; a conformed version always has source_format",
    "transforms.validate.check.x__source_severities__mutmut_8":
        "SOURCE_SEVERITY holds one rule: nothing follows the skip",
    "transforms.validate.check.x__source_severities__mutmut_10": _UNIQUE_IDS,
    "transforms.validate.check.x__source_severities__mutmut_25": _ORDER_ONLY,
    "transforms.validate.check.x__source_severities__mutmut_29": _ORDER_ONLY,
    "transforms.validate.check.x__source_severities__mutmut_38": _POLARS_STRING,
    "transforms.validate.check.x__source_severities__mutmut_41": _POLARS_STRING,
    "transforms.validate.check.x_validate__mutmut_108": "an all-true mask keeps every row: the skip only saves a copy",
    "transforms.validate.invariants.x__reader_warnings__mutmut_7":
        "the marker holds no regex metacharacter: literal or not, the same match",
    "transforms.validate.invariants.x__reader_warnings__mutmut_9":
        "the marker holds no regex metacharacter: literal or not, the same match",
    "transforms.validate.invariants.x__reader_warnings__mutmut_13":
        "the marker holds no regex metacharacter: literal or not, the same match",
    "transforms.validate.invariants.x__reader_warnings__mutmut_45":
        "findings() of an empty frame is the empty findings frame",
    "transforms.validate.invariants.x__required__mutmut_22": _NULL_CAST,
    "transforms.validate.invariants.x__required__mutmut_24": _NULL_CAST,
    "transforms.validate.invariants.x__vocab__mutmut_23": _NULL_CAST,
    "transforms.validate.invariants.x__vocab__mutmut_25": _NULL_CAST,
    "transforms.validate.invariants.x_check_episodes__mutmut_4": _NONE_FALSE,
    "transforms.validate.invariants.x_check_episodes__mutmut_16": _NONE_FALSE,
    "transforms.validate.invariants.x_check_episodes__mutmut_36": _NONE_FALSE,
    "transforms.validate.invariants.x_check_episodes__mutmut_56": _NONE_FALSE,
    "transforms.validate.contract.x__findings__mutmut_5": "the masks are numpy booleans: they hold no null to fill",
    "transforms.validate.contract.x__findings__mutmut_23": _NULL_CAST,
    "transforms.validate.contract.x__findings__mutmut_25": _NULL_CAST,
    "transforms.validate.contract.x_conform__mutmut_14": _NULL_CAST,
    "transforms.validate.contract.x_conform__mutmut_16": _NULL_CAST,
    "transforms.validate.contract.x_conform__mutmut_27": _NULL_CAST,
    "transforms.validate.contract.x_conform__mutmut_29": _NULL_CAST,
    "transforms.validate.contract.x_conform__mutmut_66": "zero_copy_only None is falsy, as False",
    "transforms.validate.contract.x_conform__mutmut_99": "zero_copy_only None is falsy, as False",
    "transforms.validate.contract.x_conform__mutmut_71": "pyarrow casts safely unless told otherwise",
    "transforms.validate.contract.x_conform__mutmut_73": "pyarrow casts safely unless told otherwise",
    "transforms.validate.contract.x_row_modes__mutmut_14": "polars reads an Array and a one-chunk ChunkedArray alike",
    "transforms.validate.contract.x_row_modes__mutmut_15": "polars reads an Array and a one-chunk ChunkedArray alike",
    "transforms.validate.contract.x_row_modes__mutmut_19": _POLARS_STRING,
    "transforms.validate.contract.x_row_modes__mutmut_22": _POLARS_STRING,
    "transforms.validate.invariants.x_check_structure__mutmut_121": _NULL_CAST,
    "transforms.validate.invariants.x_check_structure__mutmut_123": _NULL_CAST,
    "transforms.validate.invariants.x_check_structure__mutmut_124": _MISSING_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_125": _MISSING_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_205": _NEVER_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_228": _NEVER_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_245": _NEVER_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_268": _NEVER_NULL,
    "transforms.validate.invariants.x_check_structure__mutmut_3":
        "the timestamp window runs per episode in row order: sorted by step_index is sorted within each episode",
    "transforms.validate.invariants.x_check_structure__mutmut_5":
        "the timestamp window runs per episode in row order: sorted by step_index is sorted within each episode",
    "transforms.dedup.exact.x__episode_order__mutmut_20": _FALSY,
    "transforms.dedup.exact.x_no_change_steps__mutmut_34": _FALSY,
    "transforms.dedup.exact.x_no_change_steps__mutmut_56": _FALSY,
    "transforms.dedup.exact.x__episode_order__mutmut_28": _NEVER_EMPTY,
    "transforms.dedup.exact.x__episode_order__mutmut_35": _NEVER_EMPTY,
    "transforms.dedup.exact.x__episode_order__mutmut_36": _NEVER_EMPTY,
    "transforms.dedup.exact.x__episode_order__mutmut_37": _NEVER_EMPTY,
    "transforms.dedup.exact.x__episode_order__mutmut_38": _NEVER_EMPTY,
    "transforms.dedup.exact.x_hash_strings__mutmut_7": "count only preallocates: fromiter reads to the end either way",
    "transforms.dedup.minhash.x__pair_keys__mutmut_10": _INT64,
    "transforms.dedup.minhash.x__pair_keys__mutmut_12": _INT64,
    "transforms.dedup.minhash.x__pair_keys__mutmut_34":
        "keys of one or no shingle come out of the sort path as they went in",
    "transforms.dedup.minhash.x__pair_keys__mutmut_35":
        "keys of one or no shingle come out of the sort path as they went in",
    "transforms.dedup.minhash.x_cluster_sketches__mutmut_1":
        "with shingles the exact Jaccard decides: the signatures are not read",
    "transforms.dedup.minhash.x_connected_components__mutmut_3": _INT64,
    "transforms.dedup.minhash.x_connected_components__mutmut_5": _INT64,
    "transforms.dedup.minhash.x_jaccard__mutmut_3": _INT64,
    "transforms.dedup.minhash.x_jaccard__mutmut_5": _INT64,
    "transforms.dedup.minhash.x_similarity__mutmut_3": _INT64,
    "transforms.dedup.minhash.x_similarity__mutmut_5": _INT64,
    "transforms.dedup.minhash.x_similarity__mutmut_11": "overlapping chunks write the same values again",
    "transforms.dedup.minhash.x_similarity__mutmut_13": "overlapping chunks write the same values again",
    "transforms.dedup.minhash.xǁSketchesǁconcat__mutmut_43": "every part has the same band count (one MinHashParams)",
    "transforms.dedup.minhash.xǁSketchesǁconcat__mutmut_46": "numpy reads order \"f\" as \"F\"",
    "transforms.dedup.minhash.xǁSketchesǁconcat__mutmut_6": _INT64,
    "transforms.dedup.minhash.xǁSketchesǁconcat__mutmut_8": _INT64,
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_13":
        "no documents or no bands: the loop finds nothing either way",
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_33":
        "a wider index field: fewer key bits, merged buckets the exact check drops",
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_35":
        "a wider index field: fewer key bits, merged buckets the exact check drops",
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_40":
        "a wider index field: fewer key bits, merged buckets the exact check drops",
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_44": "without flags every index is a row: the same rows",
    "transforms.dedup.minhash.x__chunks__mutmut_2": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_10": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_11": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_12": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_13": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_14": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_15": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_25": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_26": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_28": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__chunks__mutmut_29": _CHUNK_EDGES,
    "transforms.dedup.minhash.x__densify__mutmut_15": "numpy stores None in a bool array as False",
    "transforms.dedup.minhash.x__densify__mutmut_24":
        "an early exit only: the later probes find nothing pending either",
    "transforms.dedup.minhash.x__densify__mutmut_25":
        "an early exit only: the later probes find nothing pending either",
    "transforms.dedup.minhash.x__densify__mutmut_43": _RESHAPE,
    "transforms.dedup.minhash.x__densify__mutmut_45": _RESHAPE,
    "transforms.dedup.minhash.x__densify__mutmut_50": _RESHAPE,
    "transforms.dedup.minhash.x__densify__mutmut_53": _RESHAPE,
    "transforms.dedup.minhash.x__signatures_t__mutmut_7": "np.full takes the dtype of its uint32 fill value",
    "transforms.dedup.minhash.x__signatures_t__mutmut_10": "np.full takes the dtype of its uint32 fill value",
    "transforms.dedup.minhash.x__signatures_t__mutmut_12": "for a power of two the multiply-shift bin is the top bits",
    "transforms.dedup.minhash.x__signatures_t__mutmut_13": "for a power of two the multiply-shift bin is the top bits",
    "transforms.dedup.minhash.x__signatures_t__mutmut_14": "for a power of two the multiply-shift bin is the top bits",
    "transforms.dedup.minhash.x__signatures_t__mutmut_16": "for a power of two the multiply-shift bin is the top bits",
    "transforms.dedup.minhash.x__signatures_t__mutmut_42": _INT64,
    "transforms.dedup.minhash.x__signatures_t__mutmut_44": _INT64,
    "transforms.dedup.minhash.x__signatures_t__mutmut_54": _RESHAPE,
    "transforms.dedup.minhash.x__signatures_t__mutmut_74": _RESHAPE,
    "transforms.dedup.minhash.x__signatures_t__mutmut_63":
        "the constants are a counter stream: the first of two is the first of one",
    "transforms.dedup.minhash.x_candidate_pairs__mutmut_105":
        "the extra pairs repeat (first, member) ones, which np.unique drops",
    "transforms.dedup.minhash.x_shingle_sets__mutmut_19":
        "the document index only sorts above the 32 shingle bits, which are kept",
    "transforms.dedup.minhash.x_sketch__mutmut_38": "a larger buffer bound costs address space only",
    "transforms.dedup.minhash.x__tokenize__mutmut_17": "a longer zero pad only",
    "transforms.dedup.minhash.x__utf8__mutmut_14":
        "a null built by pyarrow spans no bytes: filled or not, the same text",
    "transforms.dedup.minhash.x__utf8__mutmut_36": "all texts empty: no byte of the data is read either way",
    "transforms.dedup.minhash.x__utf8__mutmut_41": "all texts empty: no byte of the data is read either way",
    "transforms.dedup.minhash.x__utf8__mutmut_44": "all texts empty: no byte of the data is read either way",
    "transforms.dedup.minhash.x__utf8__mutmut_46": "all texts empty: no byte of the data is read either way",
    "transforms.dedup.minhash.x__utf8__mutmut_47": "all texts empty: no byte of the data is read either way",
    "transforms.dedup.minhash.x__whitespace__mutmut_15":
        "more lead bytes looked at closer: none of the added ones is a space",
    "transforms.dedup.minhash.x__whitespace__mutmut_23": "0x20 is whitespace by the table as by the first test",
    "transforms.dedup.minhash.x__whitespace__mutmut_7": "0x20 is whitespace by the table as by the first test",
    "transforms.dedup.minhash.x__whitespace__mutmut_8": "0x20 is whitespace by the table as by the first test",
    "transforms.dedup.minhash.x__whitespace__mutmut_22": "0x20 is whitespace by the table as by the first test",
    "transforms.dedup.minhash.x__whitespace__mutmut_18":
        "the two zero pad bytes are controls: the early return is never taken",
    "transforms.dedup.minhash.x__whitespace__mutmut_19":
        "the two zero pad bytes are controls: the early return is never taken",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_116": "reduceat keeps the uint32 of its input",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_119": "reduceat keeps the uint32 of its input",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_16": "a copy or not, the same values",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_18": "a copy or not, the same values",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_19": "a copy or not, the same values",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_33":
        "a document of exactly ngram tokens: the short shingle is its one n-gram, the same sum",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_89":
        "only short documents: the empty (or one-element) fill assigns no slot",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_91":
        "only short documents: the empty (or one-element) fill assigns no slot",
    "transforms.dedup.minhash.x_shingle_hashes__mutmut_92":
        "only short documents: the empty (or one-element) fill assigns no slot",
    "transforms.export.budget.xǁTokenCounterǁcount__mutmut_5": _TOKEN_CACHE,
    "transforms.export.budget.xǁTokenCounterǁcount__mutmut_6": _TOKEN_CACHE,
    "transforms.export.budget.xǁTokenCounterǁcount__mutmut_11": _TOKEN_CACHE,
    "transforms.export.budget.xǁTokenCounterǁcount__mutmut_9": "the cache's size bound caps memory only",
    "transforms.export.budget.xǁTokenCounterǁcount__mutmut_10": "the cache's size bound caps memory only",
    "transforms.export.cpt.x__turns__mutmut_7": _FALSY,
    "transforms.export.splits.x__bucket__mutmut_7": _HASH_ON_RATIO,
    "transforms.export.splits.x__bucket__mutmut_13": _HASH_ON_RATIO,
    "transforms.export.splits.x_assign__mutmut_18": "of two equal group keys either is the smallest",
    "ingest.ubuntu.asciicast.x__single_width__mutmut_3":
        "a set of characters all learnt narrow but equal to the learnt set goes on to the check that answers True",
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_85": _ASC_CODEC,
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_105": _ASC_CODEC,
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_166": "str() of a str is the str",
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_4": _ASC_NEWLINE,
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_6": _ASC_NEWLINE,
    "ingest.ubuntu.asciicast.x_parse_cast__mutmut_8":
        "the line number is read only after a header line was found (and numbered)",
    "ingest.ubuntu.asciicast.x_parse_size__mutmut_3":
        "every caller passes a str (an r event's data is checked to be one first)",
    "ingest.ubuntu.asciicast.x_resize_screen__mutmut_17":
        "rows kept above the top (negative numbers) are never read: all reads go by row 0 .. lines - 1",
    "ingest.ubuntu.asciicast.x_resize_screen__mutmut_26":
        "the same width: no cell lies past it to crop and no tab stop is added",
    "ingest.ubuntu.asciicast.x_steps_from_cast__mutmut_63": "without events there are no steps to read the end time",
    "ingest.ubuntu.asciicast.x_steps_from_echo__mutmut_71": "without events there are no steps to read the end time",
    "ingest.ubuntu.asciicast.x__screen_text__mutmut_15": "one cell past the last written is blank, which rstrip drops",
    "ingest.ubuntu.asciicast.xǁ_Screenǁindex__mutmut_5": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Screenǁindex__mutmut_17": "zip stops at the shorter list: the same rows move",
    "ingest.ubuntu.asciicast.xǁ_Screenǁindex__mutmut_26":
        "the slice above read every row, the last one too: it is there to pop",
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_11": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Screenǁtakes_simple_runs__mutmut_6": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_3": _ASC_UTF8,
    "ingest.ubuntu.asciicast.xǁ_Screenǁtakes_simple_runs__mutmut_11": _ASC_UTF8,
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_25":
        "the dirty set is for pyte's renderers: the reader never reads it",
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_53":
        "the dirty set is for pyte's renderers: the reader never reads it",
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_15": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw__mutmut_16": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_write__mutmut_2": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_write__mutmut_3": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_2": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_3": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_4": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_11": _ASC_CACHE,
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_6": "the bound of the SGR cache: memory only",
    "ingest.ubuntu.asciicast.xǁ_Screenǁ_sgr__mutmut_7": "the bound of the SGR cache: memory only",
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw_simple__mutmut_26": "a slice of the whole text is the text",
    "ingest.ubuntu.asciicast.xǁ_Screenǁdraw_simple__mutmut_28": "a slice of the whole text is the text",
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_8": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_11": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_23": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_26": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_27": _ASC_FAST,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_65": _ASC_UNKNOWN_CSI,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_67": _ASC_UNKNOWN_CSI,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_70": _ASC_UNKNOWN_CSI,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_72": _ASC_UNKNOWN_CSI,
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_76": "the OSC code is one digit: 'XX01XX' holds the same digits",
    "ingest.ubuntu.asciicast.xǁ_Streamǁfeed__mutmut_79": "the OSC code is one digit: 'XX02XX' holds the same digits",
    "ingest.transcript.xǁ_Builderǁassistant__mutmut_33": _FALSY,
    "ingest.transcript.xǁ_Builderǁtool__mutmut_22": _FALSY,
    "ingest.transcript.xǁ_Builderǁassistant__mutmut_39": "steps_of() sets every step's observation before it is read",
    "ingest.transcript.xǁ_Builderǁassistant__mutmut_69": "steps_of() sets every step's observation before it is read",
    "ingest.transcript.xǁ_Builderǁkeep__mutmut_1":
        "the one call without observe is for an assistant turn without text: nothing to observe",
    "ingest.transcript.x_records__mutmut_21": "the first part of a split is the same however many splits follow",
    "ingest.transcript.x_records__mutmut_19": "the first part of a split is the same however many splits follow",
    "ingest.transcript.x_records__mutmut_24": "the first part of a split is the same however many splits follow",
    "ingest.android.droidbot.x__observation__mutmut_2": _DROIDBOT_NO_STATE,
    "ingest.android.droidbot.x__observation__mutmut_3": _DROIDBOT_NO_STATE,
    "ingest.android.droidbot.x__observation__mutmut_4": _DROIDBOT_NO_STATE,
    "ingest.android.droidbot.x_event_kind__mutmut_17": "'XXXX' holds no call either: no match, as with ''",
    "ingest.android.droidbot.x__time__mutmut_38": "the tag matched is 17 characters: [15:18] is [15:17]",
    "ingest.android.androidworld.x__gunzip_head__mutmut_7":
        "wbits 17 + 15 = 32 detects the format itself: a gzip stream reads the same",
    "ingest.android.androidworld.x__gunzip_head__mutmut_11": "'XXXX' holds no framework name either",
    "ingest.android.androidworld.x__observation__mutmut_9": "None, as 0, is no 3: not an image",
    "ingest.android.androidworld.x__observation__mutmut_15": "1, as 0, is no 3: not an image",
    "ingest.android.androidworld.x__score__mutmut_6": "float(None) raises TypeError, which returns None as well",
    "ingest.android.androidworld.x__steps__mutmut_8":
        "each step appended sets it; with none appended no episode reads it",
    _AWH + "x__decode__mutmut_25": _AWH_FIRST_CALL,
    _AWH + "x__decode__mutmut_27": _AWH_FIRST_CALL,
    _AWH + "x__env__mutmut_3": "_name keeps the run folder's last name only: a name holds one slash at most",
    _AWH + "x__name__mutmut_4": "posixpath.join('', base) is base",
    _AWH + "x__view__mutmut_43": "the entry is refused unless its two index numbers are equal",
    _AWH + "x__view__mutmut_54": _AWH_POP,
    _AWH + "x__view__mutmut_57": _AWH_POP,
    _AWH + "x__view__mutmut_58": _AWH_POP,
    _AWH + "x__view__mutmut_61": _AWH_POP,
    _AWH + "x__view__mutmut_64": _AWH_POP,
    _AWH + "x__view__mutmut_65": _AWH_POP,
    "ingest.chat.tarko_requests.x_looks__mutmut_1": "the default path 'XXXX' names no tool-calls file either",
    "ingest.chat.tarko_snapshots.x__normal__mutmut_1": "the default name 'XXXX' is no noise field either",
    "ingest.chat.tarko_requests.x_compare__mutmut_94": _TARKO_XXXX,
    "ingest.chat.tarko_requests.x_compare__mutmut_100": _TARKO_XXXX,
    "ingest.chat.tarko_snapshots.x_digests__mutmut_4": _TARKO_DIGEST,
    "ingest.chat.tarko_snapshots.x_digests__mutmut_10": _TARKO_DIGEST,
    "ingest.chat.tarko_snapshots.x_holders__mutmut_10":
        "the snapshots past the last have no later one to be held by: their turns of the loop assign nothing",
    "ingest.transcript.x_call_steps__mutmut_10": _STEP_DEFAULT,
    "ingest.transcript.x_call_steps__mutmut_11": _STEP_DEFAULT,
    "ingest.transcript.x_call_steps__mutmut_29": "with no step, what was seen after the last is None already",
    "ingest.transcript.x_exchange_steps__mutmut_5": "str() of an id that is text already is that text",
    "ingest.transcript.x_exchange_steps__mutmut_17": "_made gives every step its observation: the one before is unread",
    "ingest.transcript.x_exchange_steps__mutmut_23": _STEP_DEFAULT,
    "ingest.transcript.x_exchange_steps__mutmut_24": _STEP_DEFAULT,
    "ingest.transcript.x_exchange_steps__mutmut_28": _EXCHANGE_FAST,
    "ingest.transcript.x_exchange_steps__mutmut_29": _EXCHANGE_FAST,
    "ingest.transcript.x_exchange_steps__mutmut_30": _EXCHANGE_FAST,
    "ingest.transcript.x_exchange_steps__mutmut_31": _EXCHANGE_FAST,
    "ingest.transcript.x_exchange_steps__mutmut_32": _EXCHANGE_FAST,
    "ingest.transcript.x_exchange_steps__mutmut_36": "_Builder.tool never reads a result message's tool_calls",
    "ingest.transcript.x_exchange_steps__mutmut_54": "open flags are read as truth values: None is closed, as False",
    _AWR + "x_read_replay__mutmut_106": "outcome 'unknown' is the Episode's default",
    _AWR + "x_read_replay__mutmut_107": "reward None is the Episode's default",
    "ingest.swe.minisweagent.x__int__mutmut_2": _MINI_INT,
    "ingest.swe.minisweagent.x__int__mutmut_3": _MINI_INT,
    "ingest.swe.minisweagent.x__messages__mutmut_3": _FALSY,
    "ingest.swe.minisweagent.x__messages__mutmut_28": _FALSY,
    "ingest.swe.minisweagent.x__messages__mutmut_59": _FALSY,
    "ingest.swe.minisweagent.x__messages__mutmut_152": _FALSY,
    "ingest.swe.minisweagent.x__messages__mutmut_173": _FALSY,
    "ingest.swe.minisweagent.x__messages__mutmut_142":
        "user and system messages are never kept as unplaced: their where is not read",
    "ingest.swe.minisweagent.x__messages__mutmut_145":
        "user and system messages are never kept as unplaced: their where is not read",
    "ingest.swe.minisweagent.x__messages__mutmut_207":
        "user and system messages are never kept as unplaced: their where is not read",
    "ingest.swe.minisweagent.x__messages__mutmut_210":
        "user and system messages are never kept as unplaced: their where is not read",
    "ingest.swe.minisweagent.x__messages__mutmut_200":
        "a system or user message through the catch-all branch is the same message (its raw is not read)",
    "ingest.swe.minisweagent.x__messages__mutmut_201":
        "a system or user message through the catch-all branch is the same message (its raw is not read)",
    "ingest.swe.minisweagent.x__messages__mutmut_202":
        "a system or user message through the catch-all branch is the same message (its raw is not read)",
    "ingest.swe.minisweagent.x__messages__mutmut_203":
        "a system or user message through the catch-all branch is the same message (its raw is not read)",
    "ingest.swe.minisweagent.x__messages__mutmut_246": "only assistant turns' times become step times",
    "ingest.swe.minisweagent.x__result__mutmut_33": "a result's time is not read: a step takes its turn's time",
    "ingest.swe.minisweagent.x__result__mutmut_40": "a result's time is not read: a step takes its turn's time",
    "ingest.swe.minisweagent.x__messages__mutmut_153":
        ("after a format error its feedback (text) comes first in the next observation: what follows joins it "
         "as text either way"),
    "ingest.swe.openhands.x__messages__mutmut_99": _OH_NAME,
    "ingest.swe.openhands.x__messages__mutmut_108": _OH_NAME,
    "ingest.swe.openhands.x__messages__mutmut_109": _OH_NAME,
    "ingest.swe.openhands.x__messages__mutmut_110": _OH_NAME,
    "ingest.swe.openhands.x__messages__mutmut_77": "the core makes the same text observation of a user message itself",
    "ingest.swe.openhands.x__messages__mutmut_80": "the core makes the same text observation of a user message itself",
    "ingest.swe.openhands.x__observation__mutmut_38":
        "_bad_field left out every event whose exit code is no int (or a bool)",
    "ingest.swe.openhands.x__observation__mutmut_39":
        "_bad_field left out every event whose exit code is no int (or a bool)",
    "ingest.swe.minisweagent.x_read__mutmut_117":
        "a file unit lists no folder: its report.json is never found (test_a_file_unit_reads_no_report_beside_it)",
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_46": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_47": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_48": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_49": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_54": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_55": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_56": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_57": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_79": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_80": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_81": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_82": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_85": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_86": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_87": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__quarantine_rows__mutmut_88": _NULL_ANYWAY,
    "pipelines.stages.dedup.x__shingles_of__mutmut_15": "every column read, the shingles taken: the same values",
    "pipelines.stages.dedup.x_map_signatures__mutmut_1":
        "the default batch size only: batches are concatenated in order (test_dedup_reduce.py)",
    "pipelines.stages.dedup.x_map_signatures__mutmut_7":
        "a local executor then runs the batches in this process: the same sketch",
    "pipelines.stages.dedup.x_map_signatures__mutmut_8":
        "a local executor then runs the batches in this process: the same sketch",
    "pipelines.stages.dedup.x_episode_texts__mutmut_32": "the documents are joined back in the order asked for",
    "pipelines.stages.dedup.x_episode_texts__mutmut_40": "the documents are joined back in the order asked for",
    "pipelines.stages.dedup.x_episode_texts__mutmut_59": _ORDER_ONLY,
    "pipelines.stages.dedup.x_episode_texts__mutmut_63": _ORDER_ONLY,
    "pipelines.stages.dedup.x__shingles_of__mutmut_38": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_40": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_41": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_62": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_64": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_65": "no rows asked for: no candidate pair reads the empty arrays",
    "pipelines.stages.dedup.x__shingles_of__mutmut_55": "a copy or not, the same values",
    "pipelines.stages.dedup.x__shingles_of__mutmut_57": "a copy or not, the same values",
    "pipelines.stages.dedup.x__shingles_of__mutmut_66": "a copy or not, the same values",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_3": "every column read, the four taken: the same values",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_6": "every column read, the four taken: the same values",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_73": "every member of a group has the same representative",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_89": "one survivor makes no candidate pair",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_97": "more than one survivor: there are bands to measure",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_98": "more than one survivor: there are bands to measure",
    "pipelines.stages.dedup.x_duplicates_of__mutmut_106": _RESHAPE,
    "pipelines.stages.dedup.x_duplicates_of__mutmut_166":
        "every component label indexes the counts: minlength only pads labels no row has",
    "pipelines.stages.dedup.x_sketch_group__mutmut_12":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_20":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_21":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_40":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_46":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_47":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_51":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_57":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_58":
        "a group always has parts: the table name only picks the schema of an empty read",
    "pipelines.stages.dedup.x_sketch_group__mutmut_114": _INFERRED_STRING,
    "pipelines.stages.dedup.x_sketch_group__mutmut_116": _INFERRED_STRING,
    "pipelines.stages.dedup.x_sketch_group__mutmut_127": _INT64,
    "pipelines.stages.dedup.x_sketch_group__mutmut_129": _INT64,
    "pipelines.stages.dedup.x_sketch_group__mutmut_161": _INT64,
    "pipelines.stages.dedup.x_sketch_group__mutmut_163": _INT64,
    "pipelines.stages.dedup.x_sketch_group__mutmut_137": "pyarrow casts the int64 offsets to the int32 a list takes",
    "pipelines.stages.dedup.x_sketch_group__mutmut_139": "pyarrow casts the int64 offsets to the int32 a list takes",
    "pipelines.stages.dedup.x_sketch_group__mutmut_146": "the band keys are numpy uint64: pyarrow takes the type given",
    "pipelines.stages.dedup.x_sketch_group__mutmut_148": "the band keys are numpy uint64: pyarrow takes the type given",
    "pipelines.stages.dedup.x_sketch_group__mutmut_167": "the shingles are numpy uint32: pyarrow takes the type given",
    "pipelines.stages.dedup.x_sketch_group__mutmut_169": "the shingles are numpy uint32: pyarrow takes the type given",
    "pipelines.stages.dedup.x_sketch_group__mutmut_152": _RESHAPE,
    "pipelines.stages.dedup.x_sketch_group__mutmut_164": "a fresh sketch's offsets start at 0",
    "pipelines.stages.dedup.x__shingles_of__mutmut_18": "every column read, the shingles taken: the same values",
    **{f"ingest.atif.x__branch__mutmut_{n}": _ATIF_BRANCH for n in (6, 12, 13, 16, 22, 23)},
    **{f"ingest.atif.x__root_of__mutmut_{n}": _ATIF_VERSION for n in (7, 9, 12)},
    **{f"ingest.atif.x__file_links__mutmut_{n}": _ATIF_LINK_STEP for n in (35, 38)},
    **{f"ingest.atif.x__replaces_context__mutmut_{n}": _ATIF_LINK_STEP for n in (21, 24)},
    **{f"ingest.atif.xǁ_ParallelClockǁ{f}__mutmut_{n}": _ATIF_RUN for f, n in (("__init__", 3), ("end_run", 1),
                                                                             ("stamp", 36))},
    "ingest.atif.xǁ_ParallelClockǁ__init____mutmut_4": (
        "no time is read before the first stamped call turn: a run begun there or taken as begun has no baseline "
        "and no maximum alike"),
    "ingest.atif.x__ours__mutmut_3": "every caller passes an object (the document, or a turn checked to be one)",
    "ingest.atif.x__read_doc__mutmut_2": "every caller passes the unit's uri: the default is never used",
    "ingest.atif.x__read_doc__mutmut_197": "sidechains are split out only when the file is not our export: exact "
                                           "is False there, as None",
    "ingest.atif.x__task__mutmut_4": "'XXXX' holds no Task Description block either: the message (None) comes back",
    "ingest.atif.x__trial__mutmut_118": "the exception's kind is read only when there is an exception",
    "ingest.atif.x__trial__mutmut_12": "a result that is no dict is read as {}: '' as None",
    "ingest.atif.x__trial__mutmut_55": _ASC_CODEC,
    "ingest.atif.x_units__mutmut_17": "the planner lists absolute paths: no parent is ever '.'",
    "ingest.atif.xǁMalformedǁ__init____mutmut_1": "a Malformed's message is never read, only its where and what",
    **{f"ingest.swe.codex.x__tool_call__mutmut_{n}": _CODEX_GENERIC for n in (103, 106)},
    **{f"ingest.swe.codex.xǁ_Stateǁ{f}__mutmut_{n}": _CODEX_WHERE for f, n in (
        ("_call", 32), ("_call", 38), ("_item", 41), ("_message", 36), ("_message", 39), ("add", 92), ("add", 95))},
    **{f"ingest.swe.codex.xǁ_Stateǁ{f}__mutmut_{n}": _FALSY for f, n in (
        ("__init__", 10), ("__init__", 12), ("add", 116))},
    **{f"ingest.swe.codex.xǁ_Stateǁrun__mutmut_{n}": "the Run's default, as written" for n in (31, 32, 33)},
    **{f"ingest.swe.codex.xǁ_Stateǁ{f}__mutmut_{n}": "only assistant turns' times become step times"
       for f, n in (("_item", 95), ("_item", 102), ("_message", 63), ("_message", 67))},
    **{f"ingest.swe.codex.xǁ_Stateǁ_message__mutmut_{n}": (
        "a system message through the catch-all branch is a system message too (its time is not read)")
       for n in (25, 26)},
    "ingest.swe.codex.xǁ_Stateǁ__init____mutmut_13": (
        "every assistant or tool message comes from a response item, which resets it: it is read only after one"),
    "ingest.swe.codex.xǁ_Stateǁ_item__mutmut_116": "text None is Message's default",
    **{f"ingest.swe.claude_code.{f}__mutmut_{n}": "only assistant turns' times become step times" for f, n in (
        ("x__add_assistant_content", 34), ("x__add_assistant_content", 39), ("x__messages", 97),
        ("x__messages", 104), ("x__messages", 131), ("x__messages", 135))},
    **{f"ingest.swe.claude_code.x__add_assistant_content__mutmut_{n}": (
        "a server tool's result follows its call in the same message: never kept raw, its where is not read")
       for n in (35, 40)},
    **{f"ingest.swe.claude_code.x__messages__mutmut_{n}": "user messages are never kept raw: their where is not read"
       for n in (132, 136)},
    **{f"ingest.swe.claude_code.x__messages__mutmut_{n}": (
        "the shell call ids of earlier turns are in the set already: scanning them again adds nothing")
       for n in (54, 56)},
    **{f"ingest.swe.claude_code.x__episode__mutmut_{n}": "the Run's default, as written" for n in (37, 38)},
    **{f"ingest.swe.claude_code.x_transcript_records__mutmut_{n}": "extras always holds a bookkeeping count"
       for n in (66, 68)},
    **{f"ingest.swe.openhands_v1.{f}__mutmut_{n}": _OH1_MODEL for f, n in (
        ("x__message", 46), ("x__message", 51), ("x__message", 63), ("x__message", 64), ("x__message", 65),
        ("x__message", 66), ("x__message", 67), ("x__messages", 42), ("x__messages", 111), ("x__turn", 19),
        ("x__turn", 25), ("x_read", 76), ("x_read", 141), ("x_read", 145))},
    **{f"ingest.swe.openhands_v1.x__message__mutmut_{n}": (
        "the role is a str (_bad_field) or a default: str(role) is the role") for n in range(53, 62)},
    **{f"ingest.swe.openhands_v1.{f}__mutmut_{n}": _CODEX_WHERE for f, n in (
        ("x__messages", 65), ("x__messages", 68), ("x__turn", 20), ("x__turn", 26), ("x__turn", 33))},
    **{f"ingest.swe.openhands_v1.x__mark_file_targets__mutmut_{n}": (
        "the arguments are JSON this reader wrote: parse_json never fails, its where is not read")
       for n in (14, 17, 18)},
    "ingest.swe.openhands_v1.x__call__mutmut_60": "_bad_field left out a message that is no string: None either way",
    "ingest.swe.openhands_v1.x__result__mutmut_86": "_bad_field left out an error that is no string: None either way",
    "ingest.swe.openhands_v1.x__turn__mutmut_11": "_bad_field left out reasoning that is no string: None either way",
    "ingest.swe.openhands_v1.x_units__mutmut_20": "only the keys of found are read",
    "ingest.inspect_log.x__media__mutmut_5": "a part without a type: part.get(None) is None, as the None written",
    "ingest.inspect_log.x__media__mutmut_8": "a value that is no string gives '[kind]' resolved or not",
    "ingest.inspect_log.x__message__mutmut_52": "str() of a str is the str",
    "ingest.inspect_log.x__parts__mutmut_53": "an empty reasoning is none: the core keeps only reasoning with text",
    **{f"ingest.swe.sweagent.x__action__mutmut_{n}": _SWE_ACTION for n in (16, 18, 27, 28)},
    "ingest.swe.sweagent.x__steps_from_history__mutmut_4": _SWE_FIRST,
    "ingest.swe.sweagent.x__steps_from_history__mutmut_92": _FALSY,
    "ingest.swe.sweagent.x__action__mutmut_1": _SWE_LABEL,
    "ingest.swe.sweagent.x__text__mutmut_1": _SWE_LABEL,
    "ingest.swe.sweagent.x__text__mutmut_2": _SWE_LABEL,
    "ingest.swe.sweagent.x_read__mutmut_104": "a replay_config that is no JSON: '' and None are no objects alike",
    "ingest.swe.sweagent.x_read__mutmut_197": "'' and None alike: the problem statement is taken next",
    **{f"ingest.swe.sweagent.x_read__mutmut_{n}": _SWE_ENV_SPLIT for n in (218, 219, 221)},
    **{f"ingest.agentworldbench.x__action__mutmut_{n}": "tool_action reads arguments of None as {}" for n in (35, 37)},
    **{f"ingest.agentworldbench.x__episode__mutmut_{n}": (
        "episode_domain's default is the domain itself: a search trajectory is search either way") for n in (101, 102)},
    "ingest.agentworldbench.x__episode__mutmut_82": _FALSY,
    "ingest.agentworldbench.x__episode__mutmut_90": "False is the default of terminated",
    "ingest.agentworldbench.x__lines__mutmut_4": "the extra line after a final newline is empty: blank, skipped",
    **{f"ingest.mcp.proxy_log.x__tagged__mutmut_{n}": _MCP_JSONRPC for n in (97, 98, 99, 119, 120, 121, 157, 158, 159)},
    **{f"ingest.mcp.proxy_log.x__tagged__mutmut_{n}": _MCP_REQUEST_TIME for n in (113, 117, 151, 155)},
    **{f"ingest.mcp.proxy_log.x__tagged__mutmut_{n}": "build_sessions reads no sender of a notification"
       for n in (30, 31, 114, 118)},
    **{f"ingest.mcp.proxy_log.x__tagged__mutmut_{n}": "a response's side is read through _other: any but client is "
       "the server" for n in (32, 33)},
    **{f"ingest.mcp.proxy_log.x__tagged__mutmut_{n}": ("a tagged request is answered by a server's response, which "
       "looks among the client's requests and those of no side alike") for n in (92, 96)},
    "ingest.mcp.proxy_log.x__decode__mutmut_1": ("orjson refuses None with the JSONDecodeError the fallback catches: "
                                                 "the json module reads the same value"),
    **{f"ingest.mcp.jsonrpc.x_direction_of__mutmut_{n}": _MCP_DIRECTION
       for n in (12, 13, 23, 24, 25, 26, 27, 28, 38, 39, 40, 41, 42, 43)},
    "ingest.mcp.jsonrpc.x_direction_of__mutmut_64": "'client' and 'server' never start at one index",
    "ingest.mcp.jsonrpc.x__key__mutmut_2": "orjson's text of an id is as distinct as the id",
    **{f"ingest.mcp.jsonrpc.x_build_sessions__mutmut_{n}": _MCP_SDK_SPLIT for n in (42, 43, 47)},
    **{f"ingest.mcp.jsonrpc.x__no_calls__mutmut_{n}": (
        "a session's messages count its requests, whose methods are listed: 'responses only' is never told")
       for n in (11, 12)},
    **{f"ingest.mcp.jsonrpc.x__run__mutmut_{n}": _MCP_NEVER_DONE for n in (59, 65)},
    "ingest.mcp.jsonrpc.x__run__mutmut_63": _LINUX_RUN,
    "ingest.mcp.jsonrpc.x__run__mutmut_76": "an empty client has no clientInfo: None either way",
    "ingest.mcp.jsonrpc.x__transcript__mutmut_16": "every reader gives a call's raw as an object",
    "ingest.mcp.jsonrpc.x__transcript__mutmut_23": _FALSY,
    "ingest.mcp.jsonrpc.x__transcript__mutmut_30": "tool_action reads arguments of None as {}",
    "ingest.mcp.jsonrpc.x__transcript__mutmut_54": "the transcript core reads no tool calls of a tool result",
    "ingest.mcp.jsonrpc.x_build_sessions__mutmut_111": (
        "results pair with their calls by id: where a call stands among the results changes no step and no extra"),
    "ingest.mcp.call_log.x__messages__mutmut_14": _FALSY,
    "ingest.mcp.call_log.x__messages__mutmut_20": "tool_action reads arguments of None as {}",
    **{f"ingest.mcp.call_log.x__call_episode__mutmut_{n}": _MCP_NEVER_DONE for n in (41, 46)},
    "ingest.mcp.call_log.x__call_episode__mutmut_45": _LINUX_RUN,
    **{f"ingest.mcp.jsonrpc.x_call_result__mutmut_{n}": _MCP_OBSERVE for n in (5, 12, 13)},
    "ingest.mcp.jsonrpc.x__unserialize__mutmut_7": "break leaves the loop for the same return",
    **{f"ingest.mcp.audit_log.x__message__mutmut_{n}": _MCP_JSONRPC for n in (13, 14, 15)},
    **{f"ingest.mcp.audit_log.x__message__mutmut_{n}": "an item without a type is read as text" for n in (88, 89)},
    **{f"ingest.mcp.audit_log.x__read_messages__mutmut_{n}": (
        "every greenlight record gives a row, a step or a session (its row): the empty reason is never told")
       for n in (35, 44, 45, 46)},
    **{f"ingest.mcp.sdk_calls.x__records__mutmut_{n}": "_messages tells a request by its type: anything else answers"
       for n in (76, 77)},
    **{f"ingest.mcp.sdk_calls.x_units__mutmut_{n}": "the first part of a split is the same however many splits follow"
       for n in (26, 29)},
    **{f"ingest.ubuntu.terminal_bench.{f}__mutmut_{n}": "the first part of a split is the same however many "
       "splits follow" for f, n in (("x__input_events", 31), ("x__input_events", 34), ("x__mini_swe_agent", 177),
                                    ("x__mini_swe_agent", 180), ("x__model", 21), ("x__model", 24), ("x__unwrap", 11),
                                    ("x__unwrap", 14))},
    **{f"ingest.ubuntu.terminal_bench.{f}__mutmut_{n}": _ASC_CODEC for f, n in (
        ("x__pane", 12), ("x__transcript_from_log", 11), ("x_read", 26))},
    **{f"ingest.ubuntu.terminal_bench.{f}__mutmut_{n}": "str.find reads a start of None as 0" for f, n in (
        ("x__echo_events", 23), ("x__input_events", 22))},
    "ingest.ubuntu.terminal_bench.x__echo_events__mutmut_36": "not found: -1 and -2 are both below 0",
    "ingest.ubuntu.terminal_bench.x__input_events__mutmut_61": (
        "the harness appends its blocking suffix before an Enter only: a command without one is never followed by it"),
    "ingest.ubuntu.terminal_bench.xǁ_Transcriptǁfeed__mutmut_17": "the offset of the default mark is not read",
    "ingest.ubuntu.terminal_bench.xǁ_Transcriptǁfeed__mutmut_31": "the control group holds no X",
    "ingest.ubuntu.terminal_bench.xǁ_Transcriptǁ_write__mutmut_3": (
        "padding a line as long as the column adds nothing"),
    "ingest.ubuntu.terminal_bench.x__installed_agent__mutmut_24": "'' and None are both no screen: the pane is next",
    "ingest.ubuntu.terminal_bench.x__tmux_agent__mutmut_10": "'' and None are both no screen: the pane is next",
    "ingest.ubuntu.terminal_bench.x__tmux_agent__mutmut_31": (
        "an end of None or past the last event is not among the screens: the last screen either way"),
    "ingest.ubuntu.terminal_bench.x__tmux_agent__mutmut_52": "screens has no None key: None either way",
    **{f"ingest.ubuntu.terminal_bench.x__mini_swe_agent__mutmut_{n}": (
        "an end block's kind is never read: only system, user and step blocks are") for n in (55, 56)},
    "ingest.ubuntu.terminal_bench.x__mini_swe_agent__mutmut_112": (
        "every turn sets submitted: the value before is read only without steps, which make no episode"),
    "ingest.ubuntu.terminal_bench.x__mini_swe_agent__mutmut_136": "a step header is under 200 characters",
    **{f"ingest.ubuntu.terminal_bench.x__phase_end__mutmut_{n}": (
        "agent lines come before the launch, or (tmux) no later than the last agent event: never after `after`")
       for n in (10, 11)},
    "ingest.ubuntu.terminal_bench.x__phases__mutmut_57": (
        "a C-d followed by C-ds only before tests_at has no tests phase to turn into stop"),
    "ingest.ubuntu.terminal_bench.x__phases__mutmut_80": "at tests_at 1, line 1 is a tests or stop line, never a clear",
    "ingest.ubuntu.terminal_bench.x_keystrokes__mutmut_9": "a letter's control code is the same from either case",
    "ingest.ubuntu.terminal_bench.x_read__mutmut_63": "'UNSET'.lower() is 'unset'",
    **{f"ingest.ubuntu.terminal_bench.x_read__mutmut_{n}": "launch lines follow install lines: one implies the other"
       for n in (81, 82)},
    "ingest.ubuntu.terminal_bench.x_read__mutmut_110": "_installed_agent does not read its results argument",
    **{f"ingest.ubuntu.osworld.{f}__mutmut_{n}": _ASC_CODEC for f, n in (
        ("x__lines", 38), ("x__lines", 65), ("x__lines", 131), ("x__score", 14))},
    **{f"ingest.ubuntu.osworld.x__action__mutmut_{n}": "float() reads 'INF' as infinity"
       for n in (100, 103, 126, 129)},
    **{f"ingest.android.droidbot.x__screen_size__mutmut_{n}": (
        "a square screenshot is left out before: > and >= on its sides, and on a square state's, agree")
       for n in (30, 33)},
    "ingest.android.droidbot.x__load_states__mutmut_49": "an empty image and None are both no screenshot",
    **{f"ingest.android.droidbot.x__starts_run__mutmut_{n}": "'' and 'XXXX' are neither HOME nor an am start"
       for n in (22, 39)},
    "ingest.android.droidbot.x_read__mutmut_15": "Kea's numbers are digits: above -1 and -2 alike",
    "ingest.android.droidbot.x_read__mutmut_170": "None is the default task",
    "ingest.android.droidbot.x_read__mutmut_173": "False is the default of terminated",
    "ingest.android.droidbot.x__events__mutmut_47": (
        "every SourceError reading or parsing a file raises starts with its path: the prefix is never added"),
    "ingest.mcp.proxy_log.x__lines__mutmut_6": "UTF-8 is the default codec",
    "ingest.mcp.proxy_log.x__lines__mutmut_9": _ASC_CODEC,
    "ingest.mcp.proxy_log.x__lines__mutmut_23": "a fast path only: the tag's regex needs 'payload' in some case",
    "ingest.mcp.proxy_log.x__lines__mutmut_42": "a fast path only: the payload's regex needs a '{'",
    **{f"ingest.mcp.sdk_calls.x__messages__mutmut_{n}": _MCP_JSONRPC for n in (87, 88, 89, 180, 181, 182, 199, 200,
                                                                             201)},
    **{f"ingest.mcp.sdk_calls.x__messages__mutmut_{n}": _MCP_SDK_IDS for n in (83, 84, 85, 109, 115, 213, 218, 220,
                                                                             221)},
    **{f"ingest.mcp.sdk_calls.x__messages__mutmut_{n}": _MCP_REQUEST_TIME for n in (212, 217)},
    **{f"ingest.mcp.sdk_calls.x__messages__mutmut_{n}": (
        "a response follows its request, whose session id opened its session already") for n in (214, 219)},
    "ingest.mcp.sdk_calls.x__messages__mutmut_210": (
        "a response this reader yields always answers an open request: its line is never read"),
    **{f"ingest.mcp.sdk_calls.x__messages__mutmut_{n}": (
        "only the reader's own response entries carry `_paired`: a request's raw never holds it (no recorder "
        "writes that key)") for n in (104, 105)},
    **{f"ingest.browser.har.x__members__mutmut_{n}": _HAR_BUF for n in (11, 14, 15)},
    **{f"ingest.browser.har.{f}__mutmut_{n}": _HAR_SIZE for f, n in (
        ("x__members", 71), ("x__whole_members", 22), ("x__whole_members", 25))},
    **{f"ingest.browser.har.xǁ_WithoutBomǁread__mutmut_{n}": _HAR_FIRST_READ for n in (12, 22, 25)},
    "ingest.browser.har.xǁ_WithoutBomǁread__mutmut_10": "of three bytes read, the BOM is the prefix exactly when "
                                                         "it is the suffix",
    "ingest.browser.har.xǁ_WithoutBomǁread__mutmut_24": "a read of 0 bytes returned above",
    "ingest.browser.har.x__members__mutmut_4": "the target is set before any value is built or yielded",
    "ingest.browser.har.x__members__mutmut_3": "size is set to 0 where a value starts, before it is read",
    "ingest.browser.har.xǁ_WithoutBomǁread__mutmut_6": _FALSY,
    "ingest.browser.har.x__members__mutmut_69": ("a value's closing event comes while it is built (depth > 0): "
                                                  "none reaches this test"),
    "ingest.browser.har.x__members__mutmut_77": "a value's first event opens it: ijson gives it the value None",
    **{f"ingest.browser.har.x__whole_members__mutmut_{n}": "log['entries'] set as a member is never read (the "
       "entries are read from their own rows)" for n in (20, 21)},
    "ingest.browser.har.x__body__mutmut_20": "validate=False is b64decode's default",
    "ingest.browser.har.x_exchanges_from_entries__mutmut_25": ("an absent redirect, '' or 'XXXX': no request "
                                                               "URL follows either (a URL-less request never does)"),
    "ingest.browser.har.x_read__mutmut_128": "None is the default task",
    "ingest.browser.har.x_read__mutmut_131": "False is the default of terminated",
    "ingest.browser.cdp.x_read__mutmut_124": "None is the default task",
    "ingest.browser.cdp.x_read__mutmut_127": "False is the default of terminated",
    **{f"{_PW}x__episode__mutmut_{n}": "'' is falsy, as None: read through `or` or `if` before a call sets it"
       for n in (21, 22)},
    f"{_PW}x__episode__mutmut_23": _FALSY,
    f"{_PW}x_read__mutmut_24": _FALSY,
    f"{_PW}x__episode__mutmut_74": "'none' is Observation's default kind",
    **{f"{_PW}x__first_member_name__mutmut_{n}": "a head of 30 bytes holds no name: '' and None are both no trace"
       for n in (2, 3)},
    f"{_PW}x__first_member_name__mutmut_25": _ASC_CODEC,
    f"{_PW}x__parse_chunk__mutmut_31": _ASC_CODEC,
    f"{_PW}x__network_summary__mutmut_45": "'XXXX' does not start with text/html either",
    f"{_PW}x_action_from_call__mutmut_6": "a method of '' or 'XXXX' matches no action; a code action names the "
                                          "call's own method",
    f"{_PW}x_action_from_call__mutmut_307": "here |dx| > |dy| >= 0: dx is never 0",
    f"{_PW}xǁ_Chunkǁadd__mutmut_50": "a snapshot without frameId is filed and found under one key, whatever it is",
    **{f"{_PW}xǁ_Chunkǁadd__mutmut_{n}": "a snapshot's html is never read from its meta" for n in (62, 63)},
    f"{_PW}xǁ_Clockǁ__init____mutmut_52": "return leaves __init__ as break does: nothing follows the loop",
    **{f"{_PW}xǁ_Observerǁ_snapshot__mutmut_{n}": "snapshots of an empty name or call id are not indexed: no key '' "
       "(nor 'XXXX') is ever found" for n in (6, 9)},
    f"{_BG}x__package_version__mutmut_13": _ASC_CODEC,
    f"{_BG}x__package_version__mutmut_18": "a pip freeze line holds one '==': split at the first or the last alike",
    f"{_BG}x__plain__mutmut_3": "only numpy values have tolist among what the safe loader gives",
    f"{_BG}x__side_files__mutmut_10": _FALSY,
    **{f"{_BG}x_action_from_call__mutmut_{n}": "only a 'right' button is read: any other "
       "default gives a click" for n in (54, 59, 63, 64, 373, 378, 382, 383)},
    **{f"{_BG}x_action_from_call__mutmut_{n}": "a missing delta is None, and `or 0` makes it 0"
       for n in (279, 284, 295, 300)},
    f"{_BG}x_parse_calls__mutmut_7": "mode='exec' is ast.parse's default",
    f"{_BG}x_action_from_call__mutmut_324": "here |dx| > |dy| >= 0: dx is never 0",
    f"{_BG}x_action_from_call__mutmut_136": "action_from_text writes a text that is no string "
                                                                "as JSON too",
    f"{_BG}x_read__mutmut_58": "with no StepInfo read, _segments finds no segment either",
    **{f"{_GE}{f}__mutmut_{n}": _GE_MICROSECONDS for f, n in (
        ("x__on_key", 33), ("x__touch_action", 41), ("x_read", 302))},
    **{f"{_GE}x__on_syn__mutmut_{n}": "the SYN_REPORT line itself is in the frame: it is never empty"
       for n in (7, 10)},
    f"{_GE}x__touch_action__mutmut_65": "|dx| >= |dy| and dx == 0 is no move at all: never a swipe",
    f"{_GE}x__touch_action__mutmut_76": "here |dy| > |dx| >= 0: dy is never 0",
    f"{_GE}x_read__mutmut_206": "every left-out gesture has its first line (>= 1)",
    **{f"{_GE}x_read__mutmut_{n}": "each action starts at its own line: the tuples sort by it alone"
       for n in (247, 249)},
    **{f"{_GE}x_read__mutmut_{n}": "step_problem does not check the kind vocabulary (validate does): the step "
       "kept is built again with kind 'none'" for n in (257, 258, 259)},
    f"{_GE}x_read__mutmut_304": ("the episode's own fields are fixed strings and its env JSON of decoded text: "
                               "checked_episode never refuses it, so its where is never read"),
    f"{_GE}x_read__mutmut_318": "False is the default of terminated",
    **{f"{_UA}x_read__mutmut_{n}": _ASC_CODEC for n in (45, 96)},
    **{f"{_UA}x_read__mutmut_{n}": "expat's message holds ': line' once, before the position it ends with"
       for n in (67, 68, 72)},
    f"{_UA}x_read__mutmut_9": "None or info is info: facts is set by the first dump kept, before it is read",
    f"{_UA}x_read__mutmut_142": ("the episode's own fields are fixed strings and its env JSON of names and XML text: "
                               "checked_episode never refuses it, so its where is never read"),
    f"{_UA}x_read__mutmut_156": "False is the default of terminated",
    f"{_AI}x__action__mutmut_53": ("AITW stores points as float32: their distance is never exactly the double 0.04, "
                                 "so < and <= split alike"),
    f"{_AI}x__action__mutmut_76": "|dx| >= |dy| and dx == 0 is no move at all: never a swipe",
    f"{_AI}x__action__mutmut_87": "here |dy| > |dx| >= 0: dy is never 0",
    f"{_AI}x__text__mutmut_8": _ASC_CODEC,
    f"{_AC}x__text__mutmut_6": _ASC_CODEC,
    f"{_AI}x_units__mutmut_1": "claims does not read its path argument",
    f"{_AC}x_units__mutmut_1": "claims does not read its path argument",
    f"{_AC}x__episode__mutmut_89": "False is the default of terminated",
    f"{_AN}x_read__mutmut_226": "the episode is built only when some step was kept: steps is never empty there",
    **{f"{_AN}x_read__mutmut_{n}": "a status of 'xxxx' or '' is neither success nor failure: unknown alike"
       for n in (240, 242)},
    **{f"{_AN}x_read__mutmut_{n}": "the first part of a split is the same however many splits follow"
       for n in (290, 293)},
    f"{_AN}x_read__mutmut_291": ("the env keys hold no ':' and orjson's message for what JSON input can hold (its "
                               "nesting depth) none either: split at the first or the last alike"),
    **{f"{_AR}x__action__mutmut_{n}": "only a 'right' button is read: any other default gives a click"
       for n in (47, 48)},
    f"{_AR}x__action__mutmut_129": "scroll_direction is 1 or -1: multiplying and dividing by it alike",
    f"{_AR}x__action__mutmut_150": "the branch is taken for a dy that is not 0",
    f"{_AR}x__action__mutmut_160": "the branch is taken for a dx that is not 0",
    f"{_AN}x_platform_of__mutmut_2": "str() of a falsy system ('', None, 0) names no platform either",
    f"{_AR}x__jsonl__mutmut_44": _ASC_CODEC,
    f"{_AR}x_read__mutmut_142": "any negative index is no window",
    **{f"{_AR}x_read__mutmut_{n}": "only the sign of scroll_direction is read (dy's sign)" for n in (76, 83)},
    **{f"ingest.coords.xǁSpaceǁusable__mutmut_{n}": "a side of 0 is refused by bool() before the comparison: > 0 "
                                                      "and >= 0 differ at 0 only" for n in (6, 8)},
    **{f"ingest.chat.shapes.x__acting__mutmut_{n}": ("an assistant role or an `ai` type returned True above: the "
                                                     "branches for `message` + assistant and `ai` + data add nothing "
                                                     "that a mutant of their test or result can change")
       for n in (13, 14, 15, 16, 17, 18, 20, 21, 22, 25, 26, 27)},
    **{f"ingest.chat.messages.x_{f}__mutmut_{n}": "tool_call reads its context only for a computer-use call: none here"
       for f, n in (("gemini", 44), ("openai_chat", 93), ("openai_chat", 172), ("openai_chat", 176))},
    **{f"ingest.swe.gemini_cli.x__user__mutmut_{n}": ("the core's own task is the first user text, which is the first "
                                                      "prompt (the CLI's context is a system message)")
       for n in (84, 88, 93)},
    **{f"ingest.swe.gemini_cli.x_{f}__mutmut_{n}": ("a result's or prompt's own time: the schema keeps a step's time "
                                                    "(its model turn's), none for an observation")
       for f, n in (("_model_turn", 138), ("_model_turn", 139), ("_model_turn", 140), ("_model_turn", 141),
                    ("_model_turn", 142), ("_model_turn", 110), ("_user", 76), ("_user", 80), ("_messages", 41))},
    **{f"ingest.swe.cline.x_{f}__mutmut_{n}": ("a user or tool message's time: the transcript core keeps a step's "
                                               "time (its model turn's), none for what is seen")
       for f, n in (("_messages", 90), ("_user", 98), ("_user", 104), ("_user", 124), ("_user", 128))},
    **{f"ingest.swe.cline.x_{f}__mutmut_{n}": ("where a message lies is read by the core only for a message it "
                                               "keeps raw: never a user or system message, nor a completion turn "
                                               "(it always holds its call)")
       for f, n in (("_user", 125), ("_user", 129), ("_session", 69), ("_session", 72),
                    ("_unsaved_completion", 56), ("_unsaved_completion", 62), ("read", 122))},
    "ingest.swe.cline.x__session__mutmut_66": "the core gathers system messages into env wherever they lie",
    **{f"ingest.swe.cline.x_{f}__mutmut_{n}": "Run's own defaults are domain swe and platform linux"
       for f, n in (("_session", 131), ("_session", 132), ("read", 201), ("_diagnostics", 116), ("_diagnostics", 117))},
    **{f"ingest.swe.cline.x__env__mutmut_{n}": "linux is the platform where none is named: naming it changes nothing"
       for n in (90, 91)},
    **{f"ingest.swe.cline.x__request_info__mutmut_{n}": ("the name of a parse error that is caught (a usage record "
                                                         "being written when the task stopped, kept raw)")
       for n in (4, 7, 8)},
    "ingest.swe.cline.x__diagnostics__mutmut_55": "_roo_env reads a history item only where there is one: {} and None",
    "ingest.swe.cline.x__command_exit__mutmut_33": "'XXXX' names no exit code either",
    "ingest.swe.cline.x__messages__mutmut_2": "'' or None is None: the task found is the same",
    **{f"ingest.swe.cline.x__messages__mutmut_{n}": ("Roo Code's encrypted reasoning item holds no role and no "
                                                     "content: read as a user entry it adds nothing, and its writer "
                                                     "puts it before the assistant turn, where no call is pending")
       for n in (29, 30, 31, 33, 34)},
    **{f"ingest.swe.cline.x__user__mutmut_{n}": ("Cline names the tool of the call a result answers, in its "
                                                 "`[tool ...] Result:` header or (CLI 3) the result's `name`: the "
                                                 "pending call's name, the same") for n in (32, 37, 38, 39)},
    "ingest.swe.cline.x__session__mutmut_19": ("the messages file claimed alone and '..' joined with its own name "
                                               "are the same bytes"),
    **{f"ingest.swe.cline.x_read__mutmut_{n}": ("a unit's path never ends in a slash or a space, and a leading slash "
                                               "leaves the last name alike") for n in (42, 43)},
    "ingest.swe.cline.x__session__mutmut_22": "the folder unit's folder is '': posixpath.join('', name) is name",
    "ingest.swe.cline.x_read__mutmut_18": "the listing is read for a folder unit only, which None and '' both name",
    "ingest.swe.cline.x_read__mutmut_86": "a side file that could not be read is replaced by an empty one below",
    "ingest.ubuntu.osworld_runners.x__text__mutmut_9": _ASC_CODEC,
    "ingest.ubuntu.osworld_runners.x_shift_to_after__mutmut_19": (
        "read() shifts only lines screens_before_action found acting: `before` is never empty"),
    "ingest.ubuntu.osworld_runners.x_written_as__mutmut_9": (
        "read() asks only for the last line of a turn whose step_num is an int and whose screenshot_file is a str "
        "the folder lacks: either type check alone decides alike"),
    "ingest.ubuntu.osworld_runners.x_line_fields__mutmut_12": (
        "a line whose action is null is rejected before its fields are read: an exec_code equal to the action is "
        "there to pop"),
    **{f"ingest.swe.qwen_code_export.x_members__mutmut_{n}": (
        "no path starts with a '/': at the root (folder '') a path holds one past its first character or none")
       for n in (23, 26)},
    **{f"ingest.swe.qwen_code_export.x__tool_call__mutmut_{n}": (
        "the tool name is the title's part before its first ': ': the same however many splits follow")
       for n in (13, 16)},
    "ingest.swe.qwen_code_export.x__tool_call__mutmut_20": (
        "a call whose input is null: tool_action writes absent arguments as {}, as the {} given"),
    "ingest.swe.qwen_code_export.x_members__mutmut_25": (
        "past its folder's '/', a file's path holds a '/' only after a subfolder name of one character or more: "
        "skipping that name's first character finds it alike"),
    **{f"ingest.swe.qwen_code_export.x__tool_call__mutmut_{n}": (
        "the result's message carries its observation: the transcript core takes the result from it, never from "
        "the message's own text, tool name, error flag or exit code")
       for n in (165, 167, 170, 171, 175, 177, 180, 181)},
    **{f"ingest.swe.qwen_code_export.x__tool_call__mutmut_{n}": (
        "an export message holds one call and its result, added one after the other: the core pairs the result "
        "with the call left open just before it whether the ids match or are missing")
       for n in (99, 109, 110, 111, 112, 166, 176, 186, 187, 188, 189)},
    **{f"ingest.swe.qwen_code_export.x_{f}__mutmut_{n}": (
        "`where` names a message the transcript core cannot place; a prompt, a call and the result right after it "
        "are always placed") for f, n in (("_tool_call", 85), ("_tool_call", 90), ("_tool_call", 169),
                                          ("_tool_call", 179), ("_message", 91), ("_message", 106),
                                          ("_message", 110))},
    "ingest.traces.spans.x__time__mutmut_5": "float() reads '-INF' as minus infinity",
    **{f"ingest.traces.spans.x_{f}__mutmut_{n}": (
        "an event's key holds its span's order in its third place: only a model span's own input, answer and the "
        "tool spans placed after that answer share the first three, and the places changed keep their order "
        "(input 0 or 1 before answer 1 or 2 before tools 2 or 3 with their (start, order); () sorts first)")
       for f, n in (("_start_key", 3), ("_end_key", 8), ("_end_key", 11), ("_events", 41))},
    **{f"ingest.traces.spans.x__events__mutmut_{n}": ("_apply and _transcript test an event for model_in and "
                                                      "model_out only: any other name is a span's")
       for n in (44, 45)},
    **{f"ingest.traces.spans.x__events__mutmut_{n}": ("no two events share a key (each holds its span's order and "
                                                      "which of its events it is): sorted whole, as by the key")
       for n in (47, 49)},
    "ingest.traces.spans.x__transcript__mutmut_24": (
        "a sub-episode's root span lies in that sub-episode: no event of the parent shares its key (each key holds "
        "its span's order), so < and <= link alike"),
    **{f"ingest.traces.spans.x__transcript__mutmut_{n}": "an episode holds a span at least: its count is never 0"
       for n in (58, 59)},
    **{f"ingest.swe.cline_ui.{f}__mutmut_{n}": (
        "where a UI message lies is read by the core only for a message it keeps raw, and it places every user "
        "message and every turn a UI log makes (each holds a text, a thought or a call); the calls' ids, made "
        "from the record's place, stay unique")
       for f, n in (("x__user", 11), ("x__user", 16), ("xǁ_Stateǁrecord", 29), ("xǁ_Stateǁrecord", 32),
                    ("xǁ_Stateǁrecord", 43), ("xǁ_Stateǁrecord", 87), ("xǁ_Stateǁrecord", 110),
                    ("xǁ_Stateǁrecord", 113), ("xǁ_Stateǁ_turn", 18), ("xǁ_Stateǁ_turn", 22),
                    ("xǁ_Stateǁ__init__", 1), ("x_read_ui", 2))},
    **{f"ingest.swe.cline_ui.x__action__mutmut_{n}": ("a call that carries its action becomes that action "
                                                      "(`_call_action`): its own arguments are not read")
       for n in (11, 14, 50, 53)},
    **{f"ingest.swe.cline_ui.xǁ_Stateǁ_result__mutmut_{n}": ("a result that carries its observation is seen as "
                                                               "that: the message's text is not read")
       for n in (34, 39)},
    "ingest.swe.cline_ui.xǁ_Stateǁrecord__mutmut_100": "_output does not read its kind",
    "ingest.swe.cline_ui.xǁ_Stateǁclose__mutmut_8": "'XXXX' holds no `[tool] Result:` header: no results, as ''",
    "ingest.swe.cline_ui.xǁ_Stateǁclose__mutmut_30": _FALSY,
    "ingest.swe.cline_ui.xǁ_Stateǁ__init____mutmut_9": _FALSY,
    "transforms.export.splits.x_is_held_out__mutmut_18": "a group key always holds one `=` (group_key), so split "
                                                         "at the first one gives two parts: [1] is [-1]",
}

KILLED, SURVIVED = {"killed", "timeout", "segfault", "caught by type check"}, {"survived", "no tests", "suspicious"}


def _status(code) -> str:
    from mutmut.stats import status_by_exit_code

    return status_by_exit_code[code]


def _files(under: str = "") -> list[str]:
    """The repository's files (tracked or not ignored), or those under one folder."""
    return subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *([under] if under else [])], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.splitlines()


def _copy(files: list[str], where: Path) -> None:
    for rel in files:
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, where / rel)


def _scratch(name: str, module: Module, work: Path, keep: bool) -> Path:
    """A copy of the repository's files with a [tool.mutmut] table for this module."""
    where = work / name
    if where.exists() and not keep:
        shutil.rmtree(where)
    if not where.exists():
        _copy(_files(), where)
    # the unlicensed samples lie in ../shared beside the checkout (tests/parts.py); mutmut runs the tests from
    # the copy's mutants/ folder, whose parent is the copy: ../shared is seen there
    shared = where / "shared"
    if (REPO.parent / "shared").is_dir() and not shared.exists():
        shared.symlink_to(REPO.parent / "shared")
    # a test whose input a producer writes at test time runs it from the checkout's .venv/producers
    # (`tests/ingest/swe/coding_clis.py`): seen from mutants/, where mutmut runs the tests
    venv = where / "mutants" / ".venv"
    if (REPO / ".venv").is_dir() and not venv.exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        venv.symlink_to((REPO / ".venv").resolve())
    # the table is written again on every run, so a resumed or rechecked module runs as the module says now
    table = {"source_paths": module.sources, "also_copy": PACKAGES,
             "pytest_add_cli_args_test_selection": module.tests,
             "pytest_add_cli_args": ["-p", "no:cacheprovider"]
             + (["-o", "tmp_path_retention_count=1000000"] if module.keep_tmp else [])
             + [arg for test in module.deselect for arg in ("--deselect", test)],
             "use_git_change_detection": False, "process_isolation": module.isolation,
             # a mutant that loops forever is stopped at 3x its tests' clean time (+2 s), not mutmut's 15x
             "timeout_multiplier": 3.0, "timeout_constant": 2.0}
    project = (REPO / "pyproject.toml").read_text()
    (where / "pyproject.toml").write_text(
        project + "\n[tool.mutmut]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items()))
    return where


def _mutmut() -> str:
    import mutmut

    found = (shutil.which("mutmut", path=str(Path(sys.executable).parent))
             or shutil.which("mutmut", path=str(Path(mutmut.__file__).resolve().parents[1] / "bin")))
    if not found:
        sys.exit("mutmut is not installed: pip install -e '.[mutation]'")
    return found


def _run(where: Path, budget_s: float, mutants: list[str] = (), keep_tmp: bool = False) -> bool:
    """mutmut run (of the named mutants only, when given), stopped at the budget; True when it finished."""
    import mutmut

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    if keep_tmp:  # a temporary root of its own: no other pytest session on the machine cleans it up
        (where / "pytest-tmp").mkdir(exist_ok=True)
        env["PYTEST_DEBUG_TEMPROOT"] = str(where / "pytest-tmp")
    home = str(Path(mutmut.__file__).resolve().parents[1])
    if home not in {str(Path(p).resolve()) for p in sys.path if "site-packages" in p}:
        env["PYTHONPATH"] = home  # mutmut installed outside the environment (pip --target)
    log = (where / "mutmut.log").open("ab")
    proc = subprocess.Popen(["nice", "-n", "19", _mutmut(), "run", "--max-children", "1", *mutants], cwd=where, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        proc.wait(timeout=budget_s)
        return proc.returncode == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return False


def _results(where: Path) -> dict[str, str]:
    """mutant name -> status, from mutmut's per-file records."""
    out = {}
    for meta in (where / "mutants").rglob("*.meta"):
        for name, code in json.loads(meta.read_text()).get("exit_code_by_key", {}).items():
            out[name] = _status(code)
    return out


def _show(where: Path, mutant: str) -> str:
    done = subprocess.run([_mutmut(), "show", mutant], cwd=where, capture_output=True, text=True)
    return done.stdout.strip()


def _function(mutant: str) -> str:
    """The function a mutant is of, as Module.functions names it: `x_name` -> name, `xǁClassǁname` -> Class.name."""
    mangled = mutant.split("__mutmut_")[0].rsplit(".", 1)[-1]
    return mangled[2:] if mangled.startswith("x_") else mangled[1:].replace("ǁ", ".").strip(".")


def _patterns(function: str) -> list[str]:
    """mutmut's name patterns of a function (as Module.functions names it: name, Class.method): its mutants, and
    the function itself (mutmut picks the tests to run by the function's name)."""
    cls, _, name = function.rpartition(".")
    mangled = f"*.xǁ{cls}ǁ{name}" if cls else f"*.x_{function}"
    return [f"{mangled}__mutmut_*", mangled]


def score(results: dict[str, str]) -> dict:
    equivalent = {m for m in results if m in EQUIVALENT}
    reached = {m: s for m, s in results.items() if m not in equivalent and s != "not checked"}
    killed = sum(s in KILLED for s in reached.values())
    return {"mutants": len(results), "killed": killed, "survived": len(reached) - killed,
            "equivalent": len(equivalent), "not_reached": sum(s == "not checked" for s in results.values()),
            "score": killed / len(reached) if reached else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help=f"of: {', '.join(MODULES)} (default: all)")
    parser.add_argument("--budget-s", type=float, default=600, help="seconds per module (default 600)")
    parser.add_argument("--work", default="/tmp/trajforge-mutation", help="scratch folder")
    parser.add_argument("--resume", action="store_true", help="keep the scratch copies: go on where a run stopped")
    parser.add_argument("--recheck", action="store_true",
                        help="keep the scratch copies, take the repository's tests as they are now and run the "
                             "survivors of the last run again (after tests were added for them)")
    parser.add_argument("--report-only", action="store_true", help="print the results of earlier runs only")
    parser.add_argument("--show", type=int, default=40, help="surviving mutants shown per module (diffs)")
    parser.add_argument("--list", action="store_true", help="list the modules and their tests")
    parser.add_argument("--functions", nargs="+", default=(), metavar="NAME",
                        help="run and count the mutants of these functions only (name, Class.method): a function "
                             "changed since the module's last run")
    args = parser.parse_args(argv)
    if args.list:
        for name, m in MODULES.items():
            print(f"{name:16} {' '.join(m.sources)}  <-  {' '.join(m.tests)}")
        return 0
    names = args.modules or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        parser.error(f"unknown modules {unknown}: see --list")
    work = Path(args.work)
    rows = []
    if args.functions:
        for n in names:
            MODULES[n] = replace(MODULES[n], functions=tuple(args.functions))
    for name in names:
        started = time.monotonic()
        where = _scratch(name, MODULES[name], work, keep=args.resume or args.report_only or args.recheck)
        again = []
        if args.recheck:
            tests = _files("tests")
            _copy(tests, where)
            _copy(tests, where / "mutants")
            again = sorted(m for m, st in _results(where).items() if st in SURVIVED and m not in EQUIVALENT
                           and (not MODULES[name].functions or _function(m) in MODULES[name].functions))
        if not args.recheck and MODULES[name].functions:
            # the counted functions' mutants only, and the tests that reach them
            again = [p for f in MODULES[name].functions for p in _patterns(f)]
        finished = True if args.report_only or (args.recheck and not again) \
            else _run(where, args.budget_s, again, MODULES[name].keep_tmp)
        results = _results(where)
        if MODULES[name].functions:
            left = len(results)
            results = {m: st for m, st in results.items() if _function(m) in MODULES[name].functions}
            print(f"\n{name}: {left - len(results)} mutants of functions outside `functions` left out", flush=True)
        s = score(results)
        rows.append((name, s, finished, time.monotonic() - started))
        print(f"\n== {name}: {s['killed']}/{s['killed'] + s['survived']} killed"
              + (f" = {s['score']:.0%}" if s["score"] is not None else "")
              + f", {s['survived']} survived, {s['equivalent']} equivalent, {s['not_reached']} not reached"
              + ("" if finished else " (stopped at the budget or failed: see mutmut.log)"), flush=True)
        survivors = sorted(m for m, st in results.items() if st in SURVIVED and m not in EQUIVALENT)
        for mutant in survivors[:args.show]:
            print(f"-- {mutant} ({results[mutant]})\n{_show(where, mutant)}", flush=True)
    print("\n| module | mutants | killed | survived | equivalent | not reached | score |")
    print("|---|---|---|---|---|---|---|")
    for name, s, finished, seconds in rows:
        pct = f"{s['score']:.0%}" if s["score"] is not None else "-"
        print(f"| {name} | {s['mutants']} | {s['killed']} | {s['survived']} | {s['equivalent']} | "
              f"{s['not_reached']} | {pct} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
