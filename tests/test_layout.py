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
