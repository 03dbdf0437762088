import pytest

from pipelines import definition
from pipelines.definition import DefinitionError, parse


def test_every_bundled_definition_is_valid():
    names = definition.names()
    assert "ingest-android" in names
    for name in names:
        d = definition.load(name)
        assert d.stages[0] == "ingest" and d.formats


def test_ingest_android_writes_the_android_dataset():
    assert definition.load("ingest-android").dataset == "android"


@pytest.mark.parametrize("text, message", [
    ('dataset = "x"\nformats = ["droidbott"]\ninputs = []', "unknown format 'droidbott'"),
    ('dataset = "x"\ninputs = []', "missing required key 'formats'"),
    ('dataset = "x"\nformats = ["droidbot"]\ninputs = []\nstages = ["ingest", "bake"]', "unknown stage 'bake'"),
    ('dataset = "Bad Name"\nformats = ["droidbot"]\ninputs = []', "dataset name"),
    ('dataset = "x"\nformats = ["droidbot"]\ninputs = []\ntask_mb = "big"', "'task_mb' has the wrong type"),
    ('dataset = "x"\nformats = ["droidbot"]\ninputs = []\ncolour = 1', "unknown key 'colour'"),
    ('dataset = "x"\nformats = [', "not valid TOML"),
])
def test_bad_definitions_are_refused_before_the_run(text, message):
    with pytest.raises(DefinitionError, match=message) as info:
        parse("bad", text)
    assert str(info.value).startswith("bad:")


def test_unknown_pipeline_lists_the_defined_ones():
    with pytest.raises(DefinitionError, match="ingest-android"):
        definition.load("ingest-andriod")
