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


# ---------------------------------------------------------------------------------------------------------
# One guard for the parts a test needs (tests/parts.py): no test skips on its own, nor reads CI itself.
GUARD = ROOT / "tests" / "parts.py"
# files still guarded their own way, each with why
GUARD_EXCEPTIONS = {
    "tests/ingest/test_atif_harbor.py": "Harbor needs Python >= 3.12: its check moves to a Python 3.12 venv",
}


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
