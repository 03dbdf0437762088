"""The package layout's rules, checked on the source: no import cycles between the project's modules (any
import, also inside a function), and imports flow one way between the top-level packages (DESIGN §2:
`schemas` <- `ingest`, `transforms` <- `pipelines`; `catalog` used by `pipelines`; nothing imports
`pipelines`)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("schemas", "ingest", "transforms", "catalog", "pipelines")
# what each package may import from the others
ALLOWED = {"schemas": set(), "catalog": {"schemas"}, "ingest": {"schemas"}, "transforms": {"schemas"},
           "pipelines": {"schemas", "ingest", "transforms", "catalog"}}


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(path: Path, name: str, modules: dict[str, Path]) -> set[str]:
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, name, modules) for name, path in modules.items()}


def test_no_module_imports_one_that_imports_it_back():
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_imports_flow_one_way_between_packages():
    wrong = sorted(f"{name} imports {target}" for name, targets in _graph().items() for target in targets
                   if target.split(".")[0] != name.split(".")[0]
                   and target.split(".")[0] not in ALLOWED[name.split(".")[0]])
    assert wrong == []


# Opening input any way but through `ingest.source.Source` (its guarded read_bytes / read_path / listdir):
# builtin open(), os/io/fsspec openers and listers, pathlib and glob. A zip or gzip over bytes in memory
# (io.BytesIO) is fine: the bytes came through Source.
_OPENING_ATTRS = {"listdir", "scandir", "walk", "glob", "iglob", "read_text", "read_bytes", "ls", "cat",
                  "cat_file", "find", "open", "exists", "isfile", "isdir", "size", "info"}
_OPENING_OWNERS = {"os", "io", "fs", "gzip", "bz2", "lzma", "shutil", "glob", "pathlib", "Path"}


def _in_memory(node: ast.Call) -> bool:
    """The opener reads bytes already in memory: its first argument or `fileobj=` is an io.BytesIO(...)."""
    given = (node.args[:1] or []) + [k.value for k in node.keywords if k.arg == "fileobj"]
    return any(isinstance(a, ast.Call) and getattr(a.func, "attr", getattr(a.func, "id", None)) == "BytesIO"
               for a in given)


def _opens_input(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name) and func.id in ("open", "Path", "ZipFile", "GzipFile", "TarFile"):
        return None if _in_memory(node) else f"{func.id}()"
    if isinstance(func, ast.Attribute) and func.attr in _OPENING_ATTRS:
        owner = func.value
        name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
        if name in _OPENING_OWNERS or (name == "path" and func.attr != "join"):
            return f"{name}.{func.attr}()"
    if isinstance(func, ast.Attribute) and func.attr in ("ZipFile", "GzipFile", "TarFile"):
        return None if _in_memory(node) else f"{func.attr}()"
    return None


def test_readers_open_input_only_through_source():
    """Every file a reader opens goes through `ingest.source.Source`, which keeps reads inside the input root,
    refuses what the walker refuses and applies the size budgets (a reader that listed `events/` itself once
    read a link out of the input that the walker had refused)."""
    offenders = []
    for path in sorted((ROOT / "ingest").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() in ("ingest/source.py", "ingest/registry.py"):
            continue  # the opener itself, and the registry, which reads this project's own modules, never input
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (how := _opens_input(node)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {how}")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n in ("pathlib", "glob") or n.startswith("pathlib.") for n in names):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports pathlib/glob")
    assert offenders == [], "open input through ingest.source.Source:\n" + "\n".join(offenders)


# ---------------------------------------------------------------------------------------------------------
# One guard for the parts a test needs (tests/parts.py): no test skips on its own, nor reads CI itself.
GUARD = ROOT / "tests" / "parts.py"
# files still guarded their own way, each with why
GUARD_EXCEPTIONS: dict[str, str] = {}


def _own_guards(path: Path) -> list[str]:
    """`pytest.importorskip`, `pytest.skip`, `skipif` and reads of the CI variable in one file, as 'line: what'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("importorskip", "skipif", "skip") and (
                isinstance(node.value, ast.Name) and node.value.id == "pytest" or node.attr == "skipif"):
            found.append(f"{node.lineno}: {node.attr}")
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Constant) and a.value == "CI" for a in node.args):
            found.append(f"{node.lineno}: reads CI")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "CI":
            found.append(f"{node.lineno}: reads CI")
    return found


def test_only_tests_parts_decides_whether_a_missing_part_skips():
    offenders = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if path == GUARD or rel in GUARD_EXCEPTIONS:
            continue
        if guards := _own_guards(path):
            offenders[rel] = guards
    assert offenders == {}, ("use tests/parts.py (require, require_module, require_shared_sample): it skips "
                             "here and fails under CI")


def test_the_guard_check_sees_each_kind_of_own_guard(tmp_path):
    sample = tmp_path / "test_x.py"
    sample.write_text('import os, pytest\nm = pytest.importorskip("m")\nmark = pytest.mark.skipif(True, reason="r")\n'
                      'pytest.skip("no")\nci = os.environ.get("CI")\nci2 = os.environ["CI"]\nci3 = os.getenv("CI")\n')
    assert sorted(_own_guards(sample), key=lambda s: int(s.split(":")[0])) == [
        "2: importorskip", "3: skipif", "4: skip", "5: reads CI", "6: reads CI", "7: reads CI"]


# ---------------------------------------------------------------------------------------------------------
MAX_FUNCTION_LINES = 80


def test_no_function_is_over_80_lines():
    """A function does one thing at one level: none in the packages or the benchmarks is over 80 lines (tests are
    held to it by review, not here: the vendored reference evaluation and the fuzz catalogue are tables)."""
    long = []
    for package in (*PACKAGES, "bench"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == [], "split these into named steps:\n" + "\n".join(long)
