"""Every format reader the ingest runner knows, by name, found where the formats live: a module under
`ingest/` is a format when it declares `FORMAT = "<name>"` at its top level. A format module has:

- `FORMAT` (its name here) and `VERSION` (bump it when its output changes: finished tasks are then redone),
- `INFO`, its `ingest.format_info.FormatInfo` (group, claim rank, domains, platform, summary, producer and the
  versions the tests prove),
- `units(files, head) -> list[str]`: which of the input's files (or their directories) it reads; `head(path)`
  returns a file's first 4 KiB for content sniffing; the docstring's first sentence says what it looks for,
- `read(source) -> Iterator[Episode | Rejected]`.

Names and `INFO` are read from the modules' source (`INFO` must be written in literals), not by importing them:
importing every reader takes seconds, and a worker imports only the readers its tasks use.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from pathlib import Path
from types import ModuleType

from ingest.format_info import FormatInfo

_PACKAGE = Path(__file__).resolve().parent
_DECLARED = re.compile(r'^FORMAT = "([a-z0-9_]+)"$', re.M)
_INFO_BLOCK = re.compile(r"^INFO = FormatInfo\(.*?^\)$", re.M | re.S)


@functools.cache
def _modules() -> dict[str, tuple[str, Path]]:
    """Format name -> (module, its file), from the `FORMAT` declarations of every module under ingest/."""
    found: dict[str, tuple[str, Path]] = {}
    for path in sorted(_PACKAGE.rglob("*.py")):
        names = _DECLARED.findall(path.read_text(encoding="utf-8"))
        if not names:
            continue
        module = ".".join(("ingest", *path.relative_to(_PACKAGE).with_suffix("").parts))
        if len(names) > 1 or names[0] in found:
            raise RuntimeError(f"format {names[0]!r} is declared twice ({found.get(names[0], (module,))[0]})")
        found[names[0]] = (module, path)
    return found


@functools.cache
def info(name: str) -> FormatInfo:
    """The format's `INFO`, read from its module's source."""
    module, path = _module(name)
    block = _INFO_BLOCK.search(path.read_text(encoding="utf-8"))
    call = ast.parse(block[0]).body[0].value if block else None  # only the block: parsing the module is slow
    if not isinstance(call, ast.Call) or call.args:
        raise RuntimeError(f"{module}: no `INFO = FormatInfo(...)` written in literals")
    return FormatInfo(**{k.arg: ast.literal_eval(k.value) for k in call.keywords})


def _module(name: str) -> tuple[str, Path]:
    try:
        return _modules()[name]
    except KeyError:
        raise KeyError(f"unknown format {name!r}; known: {', '.join(sorted(_modules()))}") from None


def load(name: str) -> ModuleType:
    return importlib.import_module(_module(name)[0])


@functools.cache
def names() -> tuple[str, ...]:
    """Every format, in claim order (`INFO.rank`, then name)."""
    return tuple(sorted(_modules(), key=lambda n: (info(n).rank, n)))


def group(name: str) -> tuple[str, ...]:
    """The formats of one `ingest-<name>` pipeline, in claim order."""
    return tuple(n for n in names() if info(n).group == name)


def detects(module: ModuleType) -> str:
    """What a format's detection looks for: the first sentence of its `units` docstring."""
    doc = " ".join((module.units.__doc__ or "").split())
    return doc.split(". ")[0].rstrip(".") if doc else ""
