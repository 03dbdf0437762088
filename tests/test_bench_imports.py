"""Every name a benchmark imports from the project exists (`from pipelines... import X`, also inside a function,
where the import runs only when that benchmark runs): a function renamed or moved in the packages would otherwise
break the benchmark at its next run, long after the change."""

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OWN = ("schemas", "ingest", "transforms", "catalog", "pipelines", "bench")


def _own_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of each import from the project's packages; name None for `import module`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in OWN:
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.split(".")[0] in OWN]
    return found


def missing_imports(path: Path) -> list[str]:
    """The imports of `path` from the project that name no module or no name of their module."""
    missing = []
    for line, module, name in _own_imports(path):
        try:
            imported = importlib.import_module(module)
        except ModuleNotFoundError:
            missing.append(f"{path.name}:{line}: no module {module}")
            continue
        if name is None or hasattr(imported, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError:
            missing.append(f"{path.name}:{line}: {module} has no {name}")
    return missing


@pytest.mark.parametrize("path", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_every_name_a_benchmark_imports_from_the_project_exists(path):
    assert missing_imports(path) == []


def test_a_name_gone_from_its_module_is_found(tmp_path):
    bench = tmp_path / "gone.py"
    bench.write_text("def run():\n    from pipelines.stages.validate import _read_parts, validate_group\n")
    assert missing_imports(bench) == ["gone.py:2: pipelines.stages.validate has no _read_parts"]
