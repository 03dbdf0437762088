"""A format is one place: each reader's own `INFO` feeds the registry, the pipelines' format lists, `pipelines
formats` and the README's formats tables. These tests fail where those disagree with the readers."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest import registry
from ingest.format_info import GROUPS, FormatInfo
from pipelines.infra import definition
from pipelines.cli.formats import README_END, README_START, readme_tables
from tests import goldens
from tests.conftest import REPO

PIPELINES = str(Path(sys.executable).parent / "pipelines")


def _readme_block(text: str) -> str:
    start, end = text.index(README_START), text.index(README_END) + len(README_END)
    return text[start:end]


def test_the_readme_formats_tables_are_made_from_the_readers():
    readme = REPO / "README.md"
    text = readme.read_text(encoding="utf-8")
    want = readme_tables()
    if os.environ.get(goldens.REGEN) == "1" and _readme_block(text) != want:  # rewrite the block, for review
        goldens.check(readme, text.replace(_readme_block(text), want))
        text = readme.read_text(encoding="utf-8")
    assert _readme_block(text) == want, (f"the README's formats tables differ from the readers' INFO: rewrite them "
                                         f"with `{goldens.regen_command()}` and review the diff")
    for name in registry.names():
        assert f"`{name}`" in want or registry.info(name).summary in want


@pytest.mark.parametrize("name", registry.names())
def test_every_reader_declares_what_the_registry_reads_from_its_source(name):
    module = registry.load(name)
    assert module.FORMAT == name and isinstance(module.VERSION, str)
    assert isinstance(module.INFO, FormatInfo) and module.INFO == registry.info(name)
    assert callable(module.units) and callable(module.read)
    assert registry.detects(module), f"{name}: units() needs a docstring saying what it looks for"
    assert module.INFO.domains and module.INFO.summary


def test_claim_ranks_are_unique_and_give_the_order():
    ranks = [registry.info(n).rank for n in registry.names()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_each_group_pipeline_reads_its_groups_formats_and_ingest_all_reads_every_format():
    for group in GROUPS:
        defn = definition.load(f"ingest-{group}")
        assert defn.dataset == group
        assert defn.formats == list(registry.group(group)) and defn.formats
    assert definition.load("ingest-all").formats == list(registry.names())
    grouped = {n for g in GROUPS for n in registry.group(g)}
    assert grouped | {n for n in registry.names() if registry.info(n).group is None} == set(registry.names())


def test_a_definition_names_groups_and_formats_and_refuses_unknown_ones():
    d = definition.parse("t", 'dataset = "x"\ninputs = ["a"]\nformats = ["codex", "@mcp", "*"]\n')
    assert d.formats[0] == "codex" and d.formats[1:5] == list(registry.group("mcp"))
    assert sorted(d.formats) == sorted(registry.names()) and len(set(d.formats)) == len(d.formats)
    with pytest.raises(definition.DefinitionError, match="unknown format group '@nope'"):
        definition.parse("t", 'dataset = "x"\ninputs = ["a"]\nformats = ["@nope"]\n')
    with pytest.raises(definition.DefinitionError, match="unknown format 'nope'"):
        definition.parse("t", 'dataset = "x"\ninputs = ["a"]\nformats = ["nope"]\n')


def test_a_module_declaring_a_format_is_found_without_importing_it(tmp_path, monkeypatch):
    """The registry reads `FORMAT` and `INFO` from the source: a new module is a new format, and one whose INFO
    is not written in literals is refused with its module's name."""
    pkg = tmp_path / "ingest" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "newfmt.py").write_text('FORMAT = "newfmt"\nVERSION = "1"\nINFO = FormatInfo(\n    group="mcp", rank=5, '
                                   'domains=("mcp",), platform="linux",\n    summary="new logs",\n)\n'
                                   'raise RuntimeError("imported")\n')
    (pkg / "bad.py").write_text('FORMAT = "badfmt"\nINFO = FormatInfo(\n    group=GROUP, rank=1,\n)\n')
    monkeypatch.setattr(registry, "_PACKAGE", tmp_path / "ingest")
    for cached in (registry._modules, registry.info, registry.names):
        cached.cache_clear()
    try:
        assert registry.info("newfmt") == FormatInfo(group="mcp", rank=5, domains=("mcp",), platform="linux",
                                                     summary="new logs")
        with pytest.raises(ValueError):  # GROUP is a name, not a literal
            registry.info("badfmt")
    finally:
        for cached in (registry._modules, registry.info, registry.names):
            cached.cache_clear()


def test_pipelines_formats_lists_every_reader_with_what_it_detects():
    done = subprocess.run([PIPELINES, "formats"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for name in registry.names():
        assert any(line.startswith(name + " ") for line in done.stdout.splitlines()), name
    assert "detects: A DroidBot run is a directory holding events/event_*.json" in done.stdout
    markdown = subprocess.run([PIPELINES, "formats", "--markdown"], capture_output=True, text=True, timeout=120)
    assert markdown.stdout.strip() == readme_tables()
