"""UI-TARS's reply grammar, decoded without evaluating anything (ByteDance's own parser checks the same
replies in tests/ingest/desktop/test_cua_producer.py)."""

from ingest.ui_tars import box, center, parse_reply


def test_a_click_with_its_thought():
    thought, (action,) = parse_reply("Thought: The Save button.\nAction: click(start_box='(69,161)')")
    assert thought == "The Save button."
    assert action == {"name": "click", "args": {"start_box": "(69,161)"}, "boxes": {"start_box": [69.0, 161.0]}}


def test_the_box_forms_the_models_write():
    assert box("<|box_start|>(1,2)<|box_end|>") == [1.0, 2.0]
    assert box("(10,20,30,40)") == [10.0, 20.0, 30.0, 40.0]
    assert box("[10, 20, 30, 40]") == [10.0, 20.0, 30.0, 40.0]
    assert box("<point>512 384</point>") == [512.0, 384.0]
    assert box("<bbox>1 2 3 4</bbox>") == [1.0, 2.0, 3.0, 4.0]
    assert box("somewhere") is None
    assert center([10.0, 20.0, 30.0, 40.0]) == (20.0, 30.0)


def test_typed_text_with_quotes_and_several_actions():
    _, (typed,) = parse_reply("Thought: t\nAction: type(content='it's done\\n')")
    assert typed["args"] == {"content": "it's done\\n"}
    _, actions = parse_reply("Action: hotkey(key='ctrl c')\n\nclick(point='<point>5 6</point>')")
    assert [a["name"] for a in actions] == ["hotkey", "click"]
    assert actions[1]["boxes"] == {"start_box": [5.0, 6.0]}


def test_what_is_not_a_literal_call_is_kept_unparsed_never_run():
    _, (action,) = parse_reply("Action: click(start_box=__import__('os').getcwd())")
    assert action == {"unparsed": "click(start_box=__import__('os').getcwd())"}
    assert parse_reply("Thought: only thinking") == ("only thinking", [])
