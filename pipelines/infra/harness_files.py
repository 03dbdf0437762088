"""Harness files (SWE-bench reports, mini-swe-agent's exit statuses) given to the units whose outcome they
may decide: a step of planning after the formats have claimed their units.

No format claims these files: they hold no session, and one run report grades thousands of sessions, so
none is a unit of its own. Instead, once the formats have claimed the listing, each file no format took is
recognized by its name and first bytes (`ingest.harness_reports.kind_of`) and attached to the units of the
formats that take harness files (`TAKES_HARNESS_REPORTS = True` in the format's module) that it may grade:

- a run report or an exit statuses file: every such unit under the report's folder (the SWE-bench harness
  writes its run report in the folder it ran in, usually the one holding the agent's output folder;
  mini-swe-agent writes its exit statuses in its output folder);
- an instance report (`.../<instance>/report.json`): the units under its run folder (the folder above the
  nearest `logs` folder on its path, else the folder above the instance folder) whose path has a folder or
  a file named for the instance (`<instance>`, `<instance>.traj`, `<instance>.traj.json`...); one in OpenHands'
  layout (`<run>/eval_outputs/<instance>/report.json`, where its `eval_infer.sh` moves the harness's logs) every
  unit under `<run>`, since its sessions are lines of one `<run>/output.jsonl` that no path names.

The unit gets the files' paths (`Unit.reports`, read by its reader through `Source.read_path`, which reads
nothing outside the input) and its fingerprint covers them, so a report added or changed later changes the
unit as a changed input does (`pipelines.infra.runner`). A file attached to a unit is claimed: it is not listed in
`ignored_inputs` as unread. The work is a dictionary lookup per folder of a unit's path: what planning holds
grows with the number of harness files, not with the number of units.
"""

from __future__ import annotations

import posixpath

from ingest.harness_reports import INSTANCE_REPORT, kind_of

_STEMS = (".traj.json", ".traj", ".json", ".jsonl")


def attach(paths: list[str], claimed: bytearray, units: list[tuple[str, str]], takes: set[str],
           head) -> list[tuple[int, ...]]:
    """For each (format, unit path) of `units`, the indices in sorted `paths` of the harness files that may
    decide its outcome (none for a format not in `takes`); those files are marked in `claimed`. Units given
    the same files share one tuple (a run report grades thousands of units)."""
    found: list[tuple[int, ...]] = [() for _ in units]
    shared: dict[tuple[int, ...], tuple[int, ...]] = {}
    if not any(name in takes for name, _ in units):
        return found
    by_folder, by_instance = _harness_files(paths, claimed, head)
    if not by_folder and not by_instance:
        return found
    for n, (name, unit_path) in enumerate(units):
        if name not in takes:
            continue
        folders = _folders(unit_path)
        names = set(unit_path.split("/")) | {_stem(posixpath.basename(unit_path))}
        hits = [i for folder in folders for i in by_folder.get(folder, ())]
        hits += [i for instance in names for scope, i in by_instance.get(instance, ()) if scope in folders]
        found[n] = shared.setdefault(tuple(sorted(set(hits))), tuple(sorted(set(hits))))
        for i in found[n]:
            claimed[i] = 1
    return found


def _harness_files(paths: list[str], claimed: bytearray, head):
    """The unclaimed harness files: run-level ones by the folder they grade, instance reports by instance
    name with the run folder they grade in."""
    by_folder: dict[str, list[int]] = {}
    by_instance: dict[str, list[tuple[str, int]]] = {}
    for i, path in enumerate(paths):
        if claimed[i] or not (path.endswith(".json") or path.endswith(".yaml") or path.endswith(".yml")):
            continue
        kind = kind_of(path, head(path))
        if kind is None:
            continue
        folder = posixpath.dirname(path)
        if kind == INSTANCE_REPORT and posixpath.basename(posixpath.dirname(folder)) == "eval_outputs":
            by_folder.setdefault(posixpath.dirname(posixpath.dirname(folder)), []).append(i)
        elif kind == INSTANCE_REPORT:
            by_instance.setdefault(posixpath.basename(folder), []).append((_run_folder(folder), i))
        else:
            by_folder.setdefault(folder, []).append(i)
    return by_folder, by_instance


def _run_folder(instance_folder: str) -> str:
    """The folder an instance report grades in: above the nearest `logs` folder on its path
    (`<run>/logs/run_evaluation/<run_id>/<model>/<instance>/`, `<run>/logs/<instance>/`), else above the
    instance folder."""
    parts = instance_folder.split("/")
    for k in range(len(parts) - 2, -1, -1):
        if parts[k] == "logs":
            return "/".join(parts[:k]) or "/"
    return posixpath.dirname(instance_folder)


def _folders(path: str) -> set[str]:
    """Every folder above `path` (and `path` itself: a directory unit)."""
    out = {path}
    while (parent := posixpath.dirname(path)) != path:
        out.add(parent)
        path = parent
    return out


def _stem(name: str) -> str:
    for suffix in _STEMS:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name
