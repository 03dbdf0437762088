"""Terminus 2's reply decoder on inputs a model or a file can hold that Harbor's parser tests do not reach:
nesting deeper than Python recurses, a message that is no reply, the parser a trajectory names."""

from ingest import terminus_reply


def test_nesting_deeper_than_python_recurses_is_refused_not_raised():
    text = '{"analysis": "a", "plan": "p", "commands": ' + "[" * 200_000 + "]" * 200_000 + "}"
    reply, why = terminus_reply.decode(text)
    assert reply is None and why.startswith("its JSON does not decode")
    assert terminus_reply.looks_like_reply(text)


def test_an_ordinary_message_is_no_reply_and_asks_for_no_scan():
    code = "Done: `def f(x): return {k: v for k, v in x.items()}`"
    assert not terminus_reply.may_be_reply(code)
    assert terminus_reply.decode(code)[0] is None
    assert not terminus_reply.looks_like_reply('{"status": "ok"}')


def test_the_named_parser_decides_and_an_unnamed_one_goes_by_the_response_tag():
    xml = '<response><analysis>a</analysis><plan>p</plan><commands><keystrokes duration="3">ls\n</keystrokes>' \
          '</commands></response>'
    json_reply = '{"analysis": "a", "plan": "p", "commands": [{"keystrokes": "ls\\n", "duration": 3}]}'
    for text in (xml, json_reply):
        reply, _ = terminus_reply.decode(text)
        assert reply.commands == [("ls\n", 3.0)] and not reply.task_complete
    assert terminus_reply.decode(xml, "json")[0] is None  # a JSON-parser run: Harbor refused XML
    assert terminus_reply.decode(json_reply, "xml") == (None, "no <response> tag in it")
