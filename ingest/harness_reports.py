"""Outcomes the harness around an agent wrote beside its sessions: a SWE-bench grade per instance.

An agent's trajectory says how it stopped, not whether its patch fixed the issue: the SWE-bench evaluation
harness decides that, later, and writes it in files of its own, which runs keep next to (or above) their
trajectories. Three kinds are read:

- a **run report** (`swebench.harness.reporting.make_run_report`: `<model>.<run_id>.json`, written in the
  folder the harness ran in, often above the agent's output folder; OpenHands' `eval_infer.sh` moves it to
  `<run>/report.json`, told from an instance report by its first bytes): `resolved_ids`, `unresolved_ids`,
  `empty_patch_ids`, `error_ids`, `incomplete_ids`, `completed_ids`, `submitted_ids`, `schema_version`;
- an **instance report** (`report.json`: the harness writes `logs/run_evaluation/<run_id>/<model>/<instance>/
  report.json` as `{instance_id: {"resolved": bool, "tests_status": ..., "patch_is_None"...}}`; the SWE-bench
  experiments layout, `logs/<instance>/report.json`, holds the entry alone, its folder naming the instance);
- mini-swe-agent's **exit statuses** (`exit_statuses_<time>.yaml`, one per batch invocation:
  `instances_by_exit_status: {status: [instance ids]}`): how each agent run ended, not a grade.

Planning (`pipelines.infra.harness_files`) finds these files with `kind_of` and gives each unit of a format that
takes them (`TAKES_HARNESS_REPORTS = True`) the paths of those that may name its instance, as
`Source.reports`; the reader, which knows its instance id, asks `verdict(source, instance)`.

Which file decides: an instance report naming the instance (its key, or its folder for a bare entry) wins
over a run report (it is what the run report was made from); among run reports, one whose name ends in
`.<a folder of the unit's path>.json` (the run id is the agent's output folder by custom) before the
others, then the nearest. Run report lists: `resolved_ids` -> resolved (success, reward 1);
`unresolved_ids` and `empty_patch_ids` -> not resolved (failure, reward 0: the harness counts both against the
run); `error_ids` (the harness could not grade it), `incomplete_ids` and an id only submitted or completed ->
no grade (the outcome stays unknown; `status` says which). The deciding file is named in the verdict (`file`:
its path as `<input root name>/<path inside the input>`, like a unit's uri).

Memory: a run report (thousands of ids) is decoded once per task into a map of instance -> status held in
`Source.shared` (one dict per task, shared by its units); instance reports are read by the one unit they
name, and are not kept. A bad report file is a `Rejected` row naming it; the outcome then stays unknown.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ingest.record import Rejected
from ingest.source import Source, SourceError, parse_json

RUN_REPORT, INSTANCE_REPORT, EXIT_STATUSES = "swebench_run_report", "swebench_instance_report", "exit_statuses"

# a run report's first keys (`make_run_report` writes its counts, then its id lists, indented)
_RUN_REPORT_HEAD = re.compile(rb'^\{\s*"(total_instances|submitted_instances|completed_instances|resolved_ids|'
                              rb'resolved_instances|unresolved_ids|completed_ids|submitted_ids)"\s*:')
_RUN_REPORT_KEYS = (b'"resolved_ids"', b'"unresolved_ids"', b'"resolved_instances"', b'"unresolved_instances"')
# an instance report: the entry's flags, keyed by the instance or alone
_ENTRY_KEYS = re.compile(rb'"(patch_is_None|patch_exists|patch_successfully_applied|resolved)"\s*:\s*(true|false)')
_EXIT_STATUSES_NAME = re.compile(r"^exit_statuses.*\.ya?ml$")

# run report list -> (status, resolved): the first list naming the instance decides, in this order
_LISTS = (("resolved_ids", "resolved", True), ("unresolved_ids", "unresolved", False),
          ("empty_patch_ids", "empty_patch", False), ("error_ids", "error", None),
          ("incomplete_ids", "incomplete", None), ("completed_ids", "completed", None),
          ("submitted_ids", "submitted", None))


def kind_of(path: str, head: bytes) -> str | None:
    """Which harness file `path` is, from its name and first bytes; None when it is none of them."""
    name = posixpath.basename(path)
    start = head.lstrip()
    if _EXIT_STATUSES_NAME.match(name):
        return EXIT_STATUSES if start.startswith(b"instances_by_exit_status:") else None
    if not name.endswith(".json") or not start.startswith(b"{"):
        return None
    if name == "report.json" and _ENTRY_KEYS.search(start):
        return INSTANCE_REPORT
    if _RUN_REPORT_HEAD.match(start) and any(k in start for k in _RUN_REPORT_KEYS):
        return RUN_REPORT
    return None


@dataclass
class Verdict:
    """The harness's word on one instance: `resolved` (None: no grade), the status it gave, the file that
    said so (`<input root name>/<path>`), the instance report's entry when one decided, and the agent's exit
    status from mini-swe-agent's exit statuses with the file that gave it."""

    resolved: bool | None = None
    status: str | None = None
    file: str | None = None
    entry: dict | None = None
    exit_status: str | None = None
    exit_status_file: str | None = None

    @property
    def outcome(self) -> str:
        return "unknown" if self.resolved is None else "success" if self.resolved else "failure"

    @property
    def reward(self) -> float | None:
        return None if self.resolved is None else float(self.resolved)

    def env(self) -> dict:
        """What the episode's `env` keeps of it: `outcome_file`, `harness_status`, `exit_status_file`."""
        found = {"outcome_file": self.file, "harness_status": self.status, "exit_status_file": self.exit_status_file}
        return {k: v for k, v in found.items() if v is not None}


def entry_for(doc, instance: str | None, folder: str) -> dict | None:
    """An instance report's entry for `instance`: the value under its id, or the bare entry when the report's
    folder is named for it (a single-key report under another folder names another instance)."""
    if not isinstance(doc, dict):
        return None
    if instance is not None and isinstance(doc.get(instance), dict):
        return doc[instance]
    if "resolved" in doc and instance is not None and folder == instance:
        return doc
    return None


def verdict(source: Source, instance: str | None, exit_statuses: bool = True) -> tuple[Verdict, list[Rejected]]:
    """The harness files planning gave the unit (`source.reports`), read for `instance`; mini-swe-agent's exit
    statuses only with `exit_statuses`. A broken report is a row (once per task: its decoding is kept)."""
    found, problems = Verdict(), []
    if not instance or not source.reports:
        return found, problems
    by_kind: dict[str, list[str]] = {}
    for path in source.reports:
        by_kind.setdefault(_kind_of_report(source, path, instance), []).append(path)
    for path in by_kind.get(INSTANCE_REPORT, []):
        if posixpath.basename(posixpath.dirname(path)) != instance:  # the harness names the folder for it
            continue
        try:
            entry = entry_for(parse_json(source.read_path(path), _where(source, path), source.budgets),
                              instance, posixpath.basename(posixpath.dirname(path)))
        except SourceError as e:
            problems.append(e.as_rejected())
            continue
        if entry is not None and isinstance(entry.get("resolved"), bool):
            found.resolved, found.entry = entry["resolved"], entry
            found.status, found.file = "resolved" if entry["resolved"] else "unresolved", _where(source, path)
            break
    if found.file is None:
        for path in _run_reports_in_order(source, by_kind.get(RUN_REPORT, [])):
            status, problem = _run_report_status(source, path, instance)
            problems += problem
            if status is not None:
                found.status, found.resolved = status
                found.file = _where(source, path)
                break
    for path in reversed(by_kind.get(EXIT_STATUSES, []) if exit_statuses else []):  # the latest invocation wins
        status, problem = _exit_status(source, path, instance)
        problems += problem
        if status is not None:
            found.exit_status, found.exit_status_file = status, _where(source, path)
            break
    return found, problems


def _kind_by_name(path: str) -> str:
    """A report's kind from its name and shape: `report.json` is an instance report, `exit_statuses*` the
    exit statuses, any other JSON a run report (planning gave the unit only files `kind_of` recognized)."""
    name = posixpath.basename(path)
    return INSTANCE_REPORT if name == "report.json" else EXIT_STATUSES if _EXIT_STATUSES_NAME.match(name) \
        else RUN_REPORT


def _kind_of_report(source: Source, path: str, instance: str) -> str:
    """`_kind_by_name`, except for a `report.json` outside any instance's folder: OpenHands' `eval_infer.sh` renames
    the harness's run report to `<run>/report.json`, so its first bytes say which it is (once per task)."""
    kind = _kind_by_name(path)
    folder = posixpath.dirname(path)
    if kind != INSTANCE_REPORT or posixpath.basename(folder) == instance or \
            posixpath.basename(posixpath.dirname(folder)) == "eval_outputs":
        return kind
    known = source.shared.get(("report_kind", path))
    if known is None:
        try:
            known = kind_of(path, source.read_path(path)[:4096]) or INSTANCE_REPORT
        except SourceError:
            known = INSTANCE_REPORT  # read (and rejected) as the instance report it is named as
        source.shared[("report_kind", path)] = known
    return known


def _where(source: Source, path: str) -> str:
    """`path` as `<input root name>/<path inside the input>` (a unit's uri names its files the same way)."""
    if not source.root:
        return path
    return posixpath.normpath(posixpath.join(posixpath.basename(source.root.rstrip("/")) or "input",
                                             posixpath.relpath(path, source.root)))


def _run_reports_in_order(source: Source, paths: list[str]) -> list[str]:
    """Run reports named for a folder on the unit's path first (`<model>.<run_id>.json`, run id = the output
    folder), then the nearest to the unit (deepest folder)."""
    folders = set(source.path.split("/"))

    def key(path: str):
        name = posixpath.basename(path)[:-len(".json")]
        named = any(name.endswith("." + f) for f in folders if f)
        return (not named, -path.count("/"), path)

    return sorted(paths, key=key)


def _run_report_status(source: Source, path: str, instance: str):
    """((status, resolved), []) for the instance from a run report, decoded once per task; (None, rows)."""
    index = source.shared.get(("run_report", path))
    if index is None:
        index, problems = _run_report_index(source, path)
        source.shared[("run_report", path)] = index
        if problems:
            return None, problems
    return index.get(instance), []


def _run_report_index(source: Source, path: str) -> tuple[dict, list[Rejected]]:
    where = _where(source, path)
    try:
        doc = parse_json(source.read_path(path), where, source.budgets)
    except SourceError as e:
        return {}, [e.as_rejected()]
    if not isinstance(doc, dict):
        return {}, [Rejected("bad_record", f"{where}: a run report must be a JSON object; its grades are not used",
                             where)]
    index: dict[str, tuple[str, bool | None]] = {}
    problems = []
    for key, status, resolved in _LISTS:
        ids = doc.get(key)
        if ids is None:
            continue
        if not isinstance(ids, list):
            problems.append(Rejected("bad_record", f"{where}: `{key}` is {type(ids).__name__}, expected a list of "
                                     "instance ids; that list is not used", where, record_id=key))
            continue
        for found in ids:
            if isinstance(found, str):
                index.setdefault(found, (status, resolved))
    return index, problems


def _exit_status(source: Source, path: str, instance: str):
    """(status, []) for the instance from an exit statuses file, decoded once per task; (None, rows)."""
    index = source.shared.get(("exit_statuses", path))
    problems: list[Rejected] = []
    if index is None:
        index, problems = _exit_status_index(source, path)
        source.shared[("exit_statuses", path)] = index
    return index.get(instance), problems


def _exit_status_index(source: Source, path: str) -> tuple[dict, list[Rejected]]:
    import yaml

    where = _where(source, path)
    try:
        doc = yaml.load(source.read_path(path), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except SourceError as e:
        return {}, [e.as_rejected()]
    except yaml.YAMLError as e:
        return {}, [Rejected("parse_error", f"{where}: invalid YAML: {str(e)[:300]}", where)]
    groups = doc.get("instances_by_exit_status") if isinstance(doc, dict) else None
    if not isinstance(groups, dict):
        return {}, [Rejected("bad_record", f"{where}: no `instances_by_exit_status` mapping; not used", where)]
    index = {}
    for status, ids in groups.items():
        for found in ids if isinstance(ids, list) else []:
            if isinstance(found, str):
                index[found] = str(status)
    return index, []
