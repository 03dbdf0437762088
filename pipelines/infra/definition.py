"""Pipeline definitions: one TOML file per pipeline in pipelines/definitions/, checked before a run starts."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ingest import registry
from ingest.format_info import GROUPS
from pipelines.infra.executor import Resources
from pipelines.stages import STAGES, check_options, resources_for

DEFINITIONS_DIR = Path(__file__).parent.parent / "definitions"
REPO_ROOT = Path(__file__).resolve().parents[2]
_DATASET_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class DefinitionError(Exception):
    pass


@dataclass
class Definition:
    name: str
    dataset: str
    formats: list[str]
    inputs: list[str]
    stages: list[str] = field(default_factory=lambda: ["ingest"])
    description: str = ""
    task_mb: float = 96
    stage_options: dict[str, dict] = field(default_factory=dict)  # [stage_options.<stage>] tables
    stage_resources: dict[str, dict] = field(default_factory=dict)  # [stage_resources.<stage>]: cpus, gpus, memory_mb
    path: Path | None = None

    def resources(self, stage: str) -> Resources:
        """What each task of `stage` (or "ingest") asks Ray for: as the stage declares, changed by this
        definition's `[stage_resources.<stage>]`."""
        return resources_for(stage, self.stage_resources.get(stage))

    def default_inputs(self) -> list[str]:
        """Relative inputs resolve against the repository root for the bundled definitions (so the bundled
        samples work from any cwd), against the file's own folder for a definition file of the user's."""
        base = REPO_ROOT if self.path is None or self.path.parent == DEFINITIONS_DIR else self.path.parent
        return [p if "://" in p or Path(p).is_absolute() else str(base / p) for p in self.inputs]


_FIELDS = {"description": str, "dataset": str, "inputs": list, "formats": list, "stages": list,
           "task_mb": (int, float), "stage_options": dict, "stage_resources": dict}
_REQUIRED = ("dataset", "formats", "inputs")


def _expanded(formats: list[str], where: str) -> list[str]:
    """A definition's format list with `@<group>` replaced by that group's formats and `*` by every registered
    format not named elsewhere in the list, each in claim order (`ingest.registry`)."""
    known = registry.names()
    out: list[str] = []
    for item in formats:
        if item.startswith("@"):
            if item[1:] not in GROUPS:
                raise DefinitionError(f"{where}: unknown format group {item!r} (known: "
                                      f"{', '.join('@' + g for g in GROUPS)})")
            out += registry.group(item[1:])
        elif item != "*" and item not in known:
            raise DefinitionError(f"{where}: unknown format {item!r} (known: {', '.join(sorted(known))})")
        else:
            out.append(item)
    if "*" in out:
        at = out.index("*")
        out[at:at + 1] = [f for f in known if f not in out]
    return list(dict.fromkeys(out))


def parse(name: str, text: str, path: Path | None = None) -> Definition:
    where = str(path or name)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise DefinitionError(f"{where}: not valid TOML: {e}") from None
    for key, value in data.items():
        if key not in _FIELDS:
            raise DefinitionError(f"{where}: unknown key {key!r} (known: {', '.join(_FIELDS)})")
        if not isinstance(value, _FIELDS[key]):
            raise DefinitionError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    for key in _REQUIRED:
        if key not in data:
            raise DefinitionError(f"{where}: missing required key {key!r}")
    if not _DATASET_NAME.match(data["dataset"]):
        raise DefinitionError(f"{where}: dataset name {data['dataset']!r} must match {_DATASET_NAME.pattern}")
    if not data["formats"]:
        raise DefinitionError(f"{where}: 'formats' is empty")
    data["formats"] = _expanded(data["formats"], where)
    stages = data.get("stages", ["ingest"])
    known = ["ingest", *STAGES]
    for stage in stages:
        if stage not in known:
            raise DefinitionError(f"{where}: unknown stage {stage!r} (known: {', '.join(known)})")
    for table in ("stage_options", "stage_resources"):
        for stage in data.get(table, {}):
            if stage not in stages:
                raise DefinitionError(f"{where}: {table}.{stage} names a stage the pipeline does not run")
    if not stages or stages[0] != "ingest":
        raise DefinitionError(f"{where}: the first stage must be 'ingest'")
    if data.get("task_mb", 96) <= 0:
        raise DefinitionError(f"{where}: 'task_mb' must be positive")
    for stage in stages[1:]:  # options are checked now, not when the stage starts after ingest committed
        table = data.get("stage_options", {}).get(stage, {})
        if not isinstance(table, dict):
            raise DefinitionError(f"{where}: stage_options.{stage} must be a table")
        try:
            check_options(stage, table)
        except ValueError as e:
            raise DefinitionError(f"{where}: {e}") from None
    for stage, table in data.get("stage_resources", {}).items():
        if not isinstance(table, dict):
            raise DefinitionError(f"{where}: stage_resources.{stage} must be a table")
        try:
            resources_for(stage, table)
        except ValueError as e:
            raise DefinitionError(f"{where}: {e}") from None
    return Definition(name=name, path=path, **data)


def load(name: str) -> Definition:
    """A bundled definition by name, or a definition file of the user's by its path (`my-pipeline.toml`)."""
    path = Path(name) if name.endswith(".toml") else DEFINITIONS_DIR / f"{name}.toml"
    if not path.is_file():
        raise DefinitionError(f"no pipeline named {name!r} (defined: {', '.join(names()) or 'none'}; or the path "
                              "of a .toml definition file)")
    return parse(path.stem, path.read_text(), path if path.parent == DEFINITIONS_DIR else path.resolve())


def names() -> list[str]:
    return sorted(p.stem for p in DEFINITIONS_DIR.glob("*.toml"))
