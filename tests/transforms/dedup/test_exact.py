import pyarrow.compute as pc

from transforms.dedup.exact import episode_keys, exact_groups, no_change_steps


def test_rerun_with_only_volatile_values_changed_is_an_exact_duplicate(android):
    episodes, steps, ids = android
    # the rerun really differs in its stored data: other timestamps and state hashes in every raw event
    raw = {eid: steps.filter(pc.equal(steps.column("episode_id"), eid)).column("action").combine_chunks()
           .field("raw").to_pylist() for eid in (ids["droidbot-run"], ids["rerun"])}
    assert '"tag":"2021-12-06_204505"' in raw[ids["droidbot-run"]][3].replace(" ", "")
    assert raw[ids["droidbot-run"]][3] != raw[ids["rerun"]][3]
    keys = episode_keys(steps)
    assert keys[ids["droidbot-run"]] == keys[ids["rerun"]]
    assert len({keys[ids["droidbot-run"]], keys[ids["edited"]], keys[ids["getevent"]]}) == 3
    assert exact_groups(keys) == [sorted([ids["droidbot-run"], ids["rerun"]])]


def test_no_change_steps_are_actions_after_which_the_screen_stayed_the_same(android):
    _, steps, ids = android
    found = no_change_steps(steps).to_pylist()
    run = [s for s in found if s["episode_id"] == ids["droidbot-run"]]
    # step 0 (force-stop the app) and step 1 (start it) both see the launcher state 5e81a9...
    assert [(s["step_index"], s["next_step_id"]) for s in run] == [(0, f"{ids['droidbot-run']}:1")]
