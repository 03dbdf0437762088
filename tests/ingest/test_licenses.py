"""The license stated beside an input (`ingest.licenses`): PROVENANCE.md statements as this project's samples
write them, LICENSE files by their wording, and the search from the unit's folder up to the input root."""

from pathlib import Path

from ingest.licenses import FolderCache, from_provenance, license_of, spdx_of_text
from ingest.source import Source

ROOT = Path(__file__).resolve().parents[2]
MIT_TEXT = "MIT License\n\nCopyright (c) 2025 A\n\nPermission is hereby granted, free of charge, to any person ..."
APACHE_TEXT = "                                 Apache License\n                           Version 2.0, January 2004\n"


def _source(root: Path, unit: Path) -> Source:
    import fsspec

    return Source(fs=fsspec.filesystem("file"), path=str(unit), uri=unit.name, put_blob=lambda *a: "", root=str(root))


def test_a_bullet_naming_the_unit_wins_over_the_file_license_line():
    text = ("# PROVENANCE\n\n- **License:** same as this repository.\n"
            "- `logs/run.jsonl`: from someone/repo (MIT License, Copyright (c) 2025 X),\n  copied unchanged.\n"
            "- `other.jsonl`: from another/repo (Apache-2.0).\n")
    assert from_provenance(text, "logs/run.jsonl") == "MIT"
    assert from_provenance(text, "other.jsonl") == "Apache-2.0"
    assert from_provenance(text, "third.jsonl") is None  # "same as this repository" names no license


def test_a_section_heading_states_the_license_of_the_files_listed_under_it():
    text = ("# P\n\n## From microsoft/playwright (Apache-2.0, repo LICENSE), unchanged\n\n"
            "- `trace-1.37.zip` (8630 B): a fixture.\n\n## Recorded here (no third-party content)\n\n"
            "- `producer.zip`: ours.\n")
    assert from_provenance(text, "trace-1.37.zip") == "Apache-2.0"
    assert from_provenance(text, "producer.zip") is None


def test_the_license_line_in_each_spelling_the_samples_use():
    assert from_provenance("- **License:** MIT (LICENSE)\n", "") == "MIT"
    assert from_provenance("- License: BSD-3-Clause (Copyright (c) 2018, N)\n", "x.cast") == "BSD-3-Clause"
    assert from_provenance("- **License:** ISC (declared in package.json)\n", "") == "ISC"
    assert from_provenance("- **License:** SUBMITTED (a word holding mit is no license)\n", "") is None


def test_license_files_are_recognized_by_their_wording():
    assert spdx_of_text(MIT_TEXT) == "MIT"
    assert spdx_of_text(APACHE_TEXT) == "Apache-2.0"
    assert spdx_of_text("All rights reserved. Use only with permission.") == "other"


def test_the_search_goes_up_to_the_input_root_and_no_further(tmp_path):
    (tmp_path / "LICENSE").write_text(MIT_TEXT)  # above the input root: never read
    root = tmp_path / "input"
    (root / "a" / "b").mkdir(parents=True)
    unit = root / "a" / "b" / "run.jsonl"
    unit.write_text("{}\n")
    assert license_of(_source(root, unit), FolderCache()) is None
    (root / "a" / "PROVENANCE.md").write_text("- **License:** same as this repository.\n")
    assert license_of(_source(root, unit), FolderCache()) is None
    (root / "LICENSE").write_text(APACHE_TEXT)  # "the repository" above the PROVENANCE.md
    assert license_of(_source(root, unit), FolderCache()) == "Apache-2.0"
    (root / "a" / "b" / "PROVENANCE.md").write_text("- `run.jsonl`: from x/y (BSD-2-Clause).\n")
    assert license_of(_source(root, unit), FolderCache()) == "BSD-2-Clause"


def test_a_folder_unit_its_reader_listed_is_looked_at_through_that_listing(tmp_path, monkeypatch):
    import ingest.licenses as licenses

    looked: list[str] = []
    read_small = licenses._read_small
    monkeypatch.setattr(licenses, "_read_small", lambda source, path: looked.append(path) or read_small(source, path))
    root = tmp_path / "input"
    run = root / "run"
    (run / "events").mkdir(parents=True)
    (root / "LICENSE").write_text(APACHE_TEXT)

    def found(listed: bool) -> str | None:
        looked.clear()
        source = _source(root, run)
        if listed:
            source.listdir()  # what a reader does before the license is looked for
        return license_of(source, FolderCache())

    # nothing in the run's folder: a listing answers for it (the reader's, or its own: the folder is small)
    assert found(listed=False) == "Apache-2.0"
    assert not [p for p in looked if p.startswith(str(run) + "/")]
    monkeypatch.setattr(licenses, "_LISTED_BYTES", 0)  # every folder too big to list: each name looked up
    assert found(listed=False) == "Apache-2.0"
    assert [p for p in looked if p.startswith(str(run) + "/")]  # unlisted: each name looked up
    assert found(listed=True) == "Apache-2.0"
    assert not [p for p in looked if p.startswith(str(run) + "/")]
    (run / "LICENSE.txt").write_text(MIT_TEXT)
    assert found(listed=True) == found(listed=False) == "MIT"
    (run / "PROVENANCE.md").write_text("- **License:** BSD-2-Clause\n")
    assert found(listed=True) == found(listed=False) == "BSD-2-Clause"
    (run / "PROVENANCE.md").unlink()
    (run / "LICENSE.txt").unlink()
    (run / "LICENSE").mkdir()  # a folder named LICENSE states nothing, listed or not
    assert found(listed=True) == found(listed=False) == "Apache-2.0"


def test_a_small_folder_is_listed_once_and_only_the_statements_it_holds_are_read(tmp_path, monkeypatch):
    import ingest.licenses as licenses

    looked: list[str] = []
    read_small = licenses._read_small
    monkeypatch.setattr(licenses, "_read_small", lambda source, path: looked.append(path) or read_small(source, path))
    root = tmp_path / "input"
    (root / "logs").mkdir(parents=True)
    (root / "logs" / "run.jsonl").write_text("{}\n")
    (root / "logs" / "COPYING").write_text(MIT_TEXT)
    (root / "license").write_text(APACHE_TEXT)  # another case: a filesystem that ignores case finds it as LICENSE
    found = license_of(_source(root, root / "logs" / "run.jsonl"), FolderCache())
    assert found == "MIT"
    assert looked == [str(root / "logs" / "COPYING")]
    looked.clear()
    (root / "logs" / "COPYING").unlink()
    assert license_of(_source(root, root / "logs" / "run.jsonl"), FolderCache()) is None  # `license` is not LICENSE
    assert looked == [str(root / "LICENSE")]  # but it is looked up by that name: the filesystem decides


def test_ingest_gives_each_bundled_episode_the_license_its_provenance_states(tmp_path):
    from pipelines.infra import definition
    from pipelines.infra.runner import run_ingest
    from pipelines.infra.lake import Lake
    from pipelines.infra.runs import open_catalog

    lake = tmp_path / "lake"
    result = run_ingest(definition.load("ingest-android"), str(lake), progress=False, log=lambda line: None)
    assert result.status == "success"
    with open_catalog(Lake(str(lake)), None) as cat:
        rows = dict(cat.con.execute("SELECT source_uri, license FROM episodes").fetchall())
    # samples/android/*/PROVENANCE.md: DroidBot (MIT), the getevent log (MIT), the UI Automator dump (ISC)
    assert rows["android/droidbot-run"] == "MIT"
    assert rows["android/getevent/getevent_user_input.txt"] == "MIT"
    assert rows["android/uiautomator-dump/window_dump.xml"] == "ISC"
