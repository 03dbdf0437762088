import orjson
import pytest

from transforms.label.counterfactual import (ACTION_FIELDS, actionable_elements, counterfactuals, make_action,
                                             valid_action)


def _step(action: dict, text: str = "$ ", index: int = 0) -> dict:
    return {"step_id": f"ep:{index}", "observation": {"kind": "terminal", "text": text, "ui_tree": None},
            "action": action}


def test_android_alternatives_from_the_real_view_tree(droidbot_steps):
    episode_id, steps = droidbot_steps
    made = {c.strategy: c.action for c in counterfactuals("android", steps, 0, seed=0, episode_id=episode_id)}
    assert list(made) == ["other_element", "back", "home", "scroll"]
    tap = made["other_element"]
    element = orjson.loads(tap["element"])
    # An actionable launcher icon of the first screen (1080x2280 px): the tap hits its center.
    views = {v["temp_id"]: v for v in orjson.loads(steps[0]["observation"]["ui_tree"])}
    view = views[element["temp_id"]]
    assert view["clickable"] and view["visible"] and view["enabled"]
    (x1, y1), (x2, y2) = view["bounds"]
    assert tap["kind"] == "tap" and tap["x"] == pytest.approx((x1 + x2) / 2 / 1080, abs=1e-6)
    assert tap["y"] == pytest.approx((y1 + y2) / 2 / 2280, abs=1e-6)
    assert orjson.loads(tap["raw"]) == {"counterfactual": "other_element", "replaces": f"{episode_id}:0"}
    assert all(valid_action("android", a) and set(a) == set(ACTION_FIELDS) for a in made.values())


def test_never_the_real_action(droidbot_steps):
    episode_id, steps = droidbot_steps
    real = orjson.loads(steps[3]["action"]["element"])["temp_id"]  # step 3 taps view 5
    for seed in range(15):
        for c in counterfactuals("android", steps, 3, seed=seed, episode_id=episode_id):
            assert c.strategy != "other_element" or orjson.loads(c.action["element"])["temp_id"] != real
    # Step 2's real action is BACK: no "back" counterfactual there.
    assert "back" not in [c.strategy for c in counterfactuals("android", steps, 2, episode_id=episode_id)]


def test_deterministic_and_filtered(droidbot_steps):
    episode_id, steps = droidbot_steps
    first = counterfactuals("android", steps, 1, seed=3, episode_id=episode_id)
    assert [c.action for c in first] == [c.action for c in counterfactuals("android", steps, 1, seed=3,
                                                                           episode_id=episode_id)]
    only = counterfactuals("android", steps, 1, strategies=["scroll"], episode_id=episode_id)
    assert [(c.strategy, c.action["direction"]) for c in only] == [("scroll", "down")]
    with pytest.raises(ValueError, match="unknown strategies nope"):
        counterfactuals("android", steps, 1, strategies=["nope"])


def test_accessibility_tree_elements():
    tree = {"role": "window", "bounds": [0, 0, 1920, 1080], "children": [
        {"role": "push button", "name": "Save", "bounds": [100, 50, 200, 90]},
        {"role": "label", "name": "Title", "bounds": [0, 0, 300, 40]},
        {"role": "link", "name": "Docs", "bounds": {"x": 960, "y": 540, "width": 96, "height": 54}},
        {"role": "button", "name": "Hidden", "visible": False, "bounds": [0, 0, 10, 10]}]}
    obs = {"ui_tree": orjson.dumps(tree).decode(), "width": 1920, "height": 1080}
    found = actionable_elements(obs)
    assert [(e["name"], tuple(round(v, 4) for v in box)) for e, box in found] == [
        ("Save", (0.0521, 0.0463, 0.1042, 0.0833)), ("Docs", (0.5, 0.5, 0.55, 0.55))]
    steps = [{"step_id": "w:0", "observation": {**obs, "kind": "screen", "text": "desktop"},
              "action": make_action("click", x=0.07, y=0.06)}]
    made = {c.strategy: c.action for c in counterfactuals("os", steps, 0)}
    assert list(made) == ["other_element", "escape", "scroll"]
    assert orjson.loads(made["other_element"]["element"])["name"] == "Docs"  # Save is the real target
    assert made["other_element"]["kind"] == "click" and made["escape"]["keys"] == ["Escape"]


def test_terminal_variants():
    steps = [_step(make_action("command", code="ls -la"), index=0),
             _step(make_action("command", code="cat README.md"), index=1),
             _step(make_action("command", code="python -m pytest -q"), index=2)]
    made = {c.strategy: c.action["code"] for c in counterfactuals("terminal", steps, 1, seed=0)}
    assert made["other_command"] in ("ls -la", "python -m pytest -q")
    assert made["typo_command"] == "act README.md"
    assert made["failing_command"].startswith("cd /nonexistent-") and made["failing_command"].endswith(
        " && cat README.md")
    keys = [_step(make_action("keystrokes", text="git status\n"))]
    typo = counterfactuals("terminal", keys, 0, strategies=["typo_command"])[0].action
    assert typo["kind"] == "keystrokes" and typo["text"] == "igt status\n" and valid_action("terminal", typo)


def test_tool_call_variants():
    search = make_action("tool_call", tool_name="search", arguments='{"query": "world model agents", "k": 5}')
    fetch = make_action("tool_call", tool_name="fetch", arguments='{"url": "https://example.org/a"}')
    steps = [_step(search, index=0), _step(fetch, index=1)]
    made = {c.strategy: c.action for c in counterfactuals("mcp", steps, 0, seed=1)}
    assert made["extra_tool_call"]["tool_name"] == "fetch"
    assert orjson.loads(made["extra_tool_call"]["arguments"]) == {"url": "https://example.org/a"}
    changed = orjson.loads(made["changed_arguments"]["arguments"])
    assert made["changed_arguments"]["tool_name"] == "search" and changed != {"query": "world model agents", "k": 5}
    assert changed in ({"query": "world model", "k": 5}, {"query": "world model agents", "k": 6})
    assert (made["erroring_call"]["tool_name"], made["erroring_call"]["arguments"]) == ("search", "{}")
    no_args = [_step(make_action("tool_call", tool_name="list_files", arguments="{}"))]
    erroring = counterfactuals("mcp", no_args, 0, strategies=["erroring_call"])[0].action
    assert erroring["tool_name"] == "list_files_undefined"
    assert all(valid_action("mcp", a) for a in made.values())
    assert not valid_action("mcp", make_action("tap", x=0.5, y=0.5))


def test_shell_tool_call_keeps_its_shape():
    real = make_action("command", code="ls -l hello.txt", tool_name="bash", arguments='{"command": "ls -l hello.txt"}')
    other = make_action("command", code="cat hello.txt", tool_name="bash", arguments='{"command": "cat hello.txt"}')
    steps = [_step(real, index=0), _step(other, index=1)]
    made = {c.strategy: c.action for c in counterfactuals("terminal", steps, 0)}
    typo = made["typo_command"]
    assert (typo["code"], typo["tool_name"], orjson.loads(typo["arguments"])) == (
        "sl -l hello.txt", "bash", {"command": "sl -l hello.txt"})


def test_browsergym_pruned_html_click_by_bid():
    html = ('<body bid="2"><a bid="156" href="/sales">Sales</a><div bid="160">Revenue</div>'
            '<button bid="168" type="submit">Save</button><input bid="171" name="q"/></body>')
    obs = {"kind": "web", "text": "Dashboard", "ui_tree": orjson.dumps({"pruned_html": html}).decode()}
    steps = [{"step_id": "b:0", "observation": obs, "action": make_action("click", element='{"bid": "156"}')}]
    picks = {orjson.loads(c.action["element"])["bid"] for seed in range(12)
             for c in counterfactuals("web", steps, 0, strategies=["other_element"], seed=seed)}
    assert picks == {"168", "171"}  # the link the agent clicked and the plain div are never picked
