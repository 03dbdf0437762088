import pytest

from pipelines.infra import definition
from pipelines.infra.definition import DefinitionError, parse


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


# one name per option: a stage's TOML keys are its command's flags ------------------------------------------
DEFN = 'dataset = "x"\nformats = ["droidbot"]\ninputs = []\nstages = ["ingest", "validate"]\n'


def _flags() -> dict[str, set[str]]:
    from pipelines.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    return {name: {s for a in p._actions for s in a.option_strings} for name, p in commands.items()}


def test_stage_options_and_flags_share_their_names():
    import dataclasses

    from pipelines.stages.label import LabelOptions
    from pipelines.infra.options import DedupOptions, ExportOptions, ValidateOptions

    flags = _flags()
    checked = {"validate": (ValidateOptions, ()), "dedup": (DedupOptions, ()), "export": (ExportOptions, ("kind",)),
               # the labeler's sampling fields are flags of their own; the API key comes from $OPENAI_API_KEY;
               # engine arguments are given one by one (--engine-arg KEY=VALUE)
               "label": (LabelOptions, ("sampling", "api_key", "backoff_s", "engine_args"))}
    for command, (cls, exempt) in checked.items():
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in exempt and "--" + f.name.replace("_", "-") not in flags[command]]
        assert missing == [], command


def test_a_typo_in_stage_options_fails_before_anything_runs():
    typo = DEFN.replace('"validate"]', '"dedup"]') + "[stage_options.dedup]\nthreshhold = 0.9\n"
    with pytest.raises(DefinitionError, match=r"stage_options\.dedup: unknown option threshhold \(known: threshold"):
        parse("typo", typo)
    wrong = DEFN + '[stage_options.validate]\ngx = "yes"\n'
    with pytest.raises(DefinitionError, match=r"stage_options\.validate\.gx: expected bool, got str 'yes'"):
        parse("wrong", wrong)
    no_model = DEFN.replace('"validate"]', '"label"]')
    with pytest.raises(DefinitionError, match="stage_options.label: 'model' is required"):
        parse("label", no_model)
