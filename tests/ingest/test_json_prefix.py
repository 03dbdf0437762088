"""`ingest.json_prefix` on arrays cut where a writer can die: between items, inside an object's value, inside a
key, and on text that is no array."""

import json

from ingest.json_prefix import array_prefix


def test_an_array_cut_inside_an_object_keeps_the_whole_items_and_the_fields_before_the_cut():
    whole = [{"task": "t", "task_images": None}, {"step": 1, "tool_calls": [{"id": "c"}], "error": None,
                                                  "model_output_message": {"content": "x"}}]
    text = json.dumps(whole, indent=4)
    cut = text[:text.index('"model_output_message"') + len('"model_output_message": ')]
    found = array_prefix(cut)
    assert found.items == whole[:1]
    assert found.fields == {"step": 1, "tool_calls": [{"id": "c"}], "error": None}
    assert found.cut_at == "model_output_message"


def test_an_array_cut_between_items_or_inside_a_key_keeps_what_is_whole():
    assert array_prefix('  [1, {"a": 2},').items == [1, {"a": 2}]
    found = array_prefix('[{"a": 1}, {"b": [1, 2], "lon')
    assert (found.items, found.fields, found.cut_at) == ([{"a": 1}], {"b": [1, 2]}, None)
    found = array_prefix('[{"a": 1}, [1, 2')
    assert (found.items, found.fields) == ([{"a": 1}], None)  # a cut list is no object: nothing of it is kept


def test_text_that_is_no_array_is_none():
    assert array_prefix('{"a": 1') is None and array_prefix("") is None
