import datetime
import enum
import json

import pytest

from transforms import agentworld

TERMINAL_ACTION = {"kind": "keystrokes", "text": "ls -la\n", "duration_s": 0.5, "x": None, "raw": "{...}"}


def test_terminal_action_is_the_reference_keystrokes_array():
    assert agentworld.action_object("terminal", TERMINAL_ACTION) == [{"keystrokes": "ls -la\n", "duration": 0.5}]
    assert agentworld.action_object("terminal", {"kind": "command", "code": "pwd"}) == [{"keystrokes": "pwd\n"}]
    assert agentworld.action_object("terminal", {"kind": "done"}) == []


def test_tool_call_is_name_and_parsed_arguments():
    action = {"kind": "tool_call", "tool_name": "web_search", "arguments": '{"queries": ["a b"]}', "raw": "x"}
    assert agentworld.action_object("search", action) == {"name": "web_search", "arguments": {"queries": ["a b"]}}


def test_generic_action_drops_nulls_and_raw_parses_element_rounds_coordinates():
    action = {"kind": "tap", "x": 0.123456, "y": 0.5, "x2": None, "element": '{"id": 7}', "raw": "{}",
              "text": None}
    assert agentworld.action_object("android", action) == {"kind": "tap", "x": 0.1235, "y": 0.5,
                                                           "element": {"id": 7}}


def test_action_turn_layout():
    text = agentworld.action_turn(1, TERMINAL_ACTION, "root@host:/app#", domain="terminal")
    assert text == ('### Turn 1\n**Current State:**\nroot@host:/app#\n\n**Action:**\n```json\n'
                    '[\n  {\n    "keystrokes": "ls -la\\n",\n    "duration": 0.5\n  }\n]\n```')
    assert agentworld.action_turn(2, {"kind": "back"}) == '### Turn 2\n**Action:**\n```json\n{\n  "kind": "back"\n}\n```'


def test_observation_turn_starts_with_the_marker():
    assert agentworld.observation_turn("done") == "**Environment Observation:**\ndone"


def test_system_prompt_fills_placeholders_and_keeps_literal_braces():
    tools = [{"name": "get_weather", "description": "d", "parameters": {"type": "object"}}]
    text = agentworld.system_prompt("mcp", tools, demonstrations="DEMO")
    assert "{tool_definitions}" not in text and "{demonstrations}" not in text
    assert json.dumps(tools, indent=2) in text and text.endswith("DEMO")
    assert '{"type":"text","text":"..."}' in text  # literal braces survive
    android = agentworld.system_prompt("android")
    assert android.startswith("# Role and Objective\n\nYou are an **Android World Model**")
    for domain in agentworld.DOMAINS:
        assert "{tool_definitions}" not in agentworld.system_prompt(domain)
    with pytest.raises(ValueError, match="no AgentWorld system prompt"):
        agentworld.system_prompt("desktop")


def test_transition_messages_alternate_and_end_with_the_user_action():
    history = [({"kind": "keystrokes", "text": "cd /\n"}, "root@host:/#"),
               ({"kind": "keystrokes", "text": "ls\n"}, "bin etc\nroot@host:/#")]
    msgs = agentworld.transition_messages("terminal", history, {"kind": "wait", "duration_s": 2.0}, "root@host:~#")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[1]["content"].startswith("### Turn 1\n**Current State:**\nroot@host:~#\n\n**Action:**")
    assert "**Current State:**" not in msgs[3]["content"]
    assert msgs[4]["content"] == "**Environment Observation:**\nbin etc\nroot@host:/#"
    assert msgs[5]["content"].startswith("### Turn 3\n**Action:**") and '"keystrokes": ""' in msgs[5]["content"]


class IntEnumKind(enum.IntEnum):
    TAP = 3


class StrSub(str):
    pass


@pytest.mark.parametrize("value", [
    [{"keystrokes": "ls -la\n", "duration": 0.5}], [], {}, {"a": {}, "b": [[]]},
    {"name": "read", "arguments": {"path": "/tmp/é ü \u2028 \x1f \x7f", "n": -2**63, "ok": True, "x": None}},
    {"kind": "tap", "x": 0.0001, "y": 1e16, "z": -0.0, "w": 123456.789},
    {"kind": "tap", "x": 5e-05},  # the stdlib writes 5e-05, orjson 5e-5
    {"v": float("nan"), "w": float("inf")},  # the stdlib writes NaN / Infinity
    {"big": 2**64}, {1: "int key"}, ["\ud800 lone surrogate"], ("a", "tuple"),
    {"text": "line-e-1 is null", "v": [[{"deep": 3e-07}]]}, {"text": "e-mail", "n": None}, [1e-300, -2e-5, 9.99e-05, 1e-10],
    {"when": datetime.datetime(2026, 1, 2)}, {"kind": IntEnumKind.TAP}, {"s": StrSub("x")},
])
def test_action_json_text_is_the_stdlib_text(value):
    # the fast path must not change a byte of what exports write, nor accept what the stdlib refuses
    try:
        expected = json.dumps(value, ensure_ascii=False, indent=2)
    except TypeError:
        with pytest.raises(TypeError):
            agentworld._dumps(value)
        return
    assert agentworld._dumps(value) == expected


def test_action_json_text_is_the_stdlib_text_for_floats_of_every_magnitude():
    import random

    rng = random.Random(7)
    values = [rng.choice((-1, 1)) * rng.random() * 10.0 ** rng.randint(-12, 20) for _ in range(3000)]
    values += [0.0001, 0.00009999999999999999, 1e-4 * (1 - 1e-16), 5e-324, 1e16, 1e-5]
    for value in values:
        assert agentworld._dumps({"x": value}) == json.dumps({"x": value}, ensure_ascii=False, indent=2), value
