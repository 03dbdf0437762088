"""Every Android format side by side in one input folder: each file is read by its own format, once."""

import shutil

from tests.conftest import SAMPLES
from tests.ingest.android import test_aitw, test_androidcontrol, test_androidworld
from tests.ingest.android.test_androidworld import aw  # noqa: F401  (fixture)


def test_all_android_formats_coexist_in_one_folder(run, query, tmp_path, aw):  # noqa: F811
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLES / "android" / "droidbot-run", inbox / "droidbot-run")
    (inbox / "dumps").mkdir(parents=True)
    shutil.copy(SAMPLES / "android" / "uiautomator-dump" / "window_dump.xml", inbox / "dumps" / "0001.xml")
    shutil.copy(SAMPLES / "android" / "uiautomator-dump" / "window_dump.xml", inbox / "dumps" / "0002.xml")
    shutil.copy(SAMPLES / "android" / "getevent" / "getevent_user_input.txt", inbox / "touches.log")
    test_aitw.build(inbox / "general-00000-of-00321")
    test_androidcontrol.build(inbox / "android_control-00000-of-00020")
    test_androidworld.result_file(inbox / "SystemWifiTurnOff.pkl.gz", *aw)
    (inbox / "README.txt").write_text("notes about this folder\n")

    result = run("ingest-android", [inbox])
    per_format = {r["source_format"]: (r["episodes"], r["steps"]) for r in query(
        "SELECT source_format, count(*) AS episodes, sum(num_steps) AS steps FROM episodes GROUP BY 1")}
    assert per_format == {"droidbot": (1, 12), "uiautomator": (1, 2), "getevent": (1, 48), "aitw": (2, 5),
                          "androidcontrol": (2, 7), "androidworld": (1, 3)}
    # records in = steps kept + quarantined: the AITW step with an unknown action, the AndroidControl episode
    # whose counts disagree, the AndroidWorld episode that raised
    assert result.steps == 77 and result.quarantined == 3 and result.status == "success"
    assert query("SELECT count(*) AS n FROM steps")[0]["n"] == 77
    assert sorted(r["source_uri"] for r in query("SELECT source_uri FROM quarantine")) == [
        "inbox/SystemWifiTurnOff.pkl.gz", "inbox/android_control-00000-of-00020", "inbox/general-00000-of-00321"]
    assert [i.path.rsplit("/", 1)[-1] for i in result.ignored] == ["README.txt"]


def test_bundled_samples_still_ingest(run, query):
    result = run("ingest-android")
    assert result.status == "success" and result.quarantined == 0
    assert {r["f"]: r["n"] for r in query("SELECT source_format AS f, sum(num_steps) AS n FROM episodes GROUP BY 1")} \
        == {"droidbot": 12, "uiautomator": 1, "getevent": 48,
            "androidworld_history": 12}  # the bundled AndroidWorld task-runner run (UI-TARS replies)
