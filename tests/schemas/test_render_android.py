"""`render_android_screen`: what a line of a view holds and in what order, which views get one, and how the
hierarchy is walked (DroidBot's view list shape)."""

from schemas.render import render_android_screen


def _view(i, parent, children=(), **fields):
    return {"temp_id": i, "parent": parent, "children": list(children), **fields}


def test_a_line_holds_the_short_class_texts_id_flags_in_order_and_bounds():
    views = [_view(0, -1, [1], **{"class": "android.widget.FrameLayout", "bounds": [[0, 0], [1080, 1920]]}),
             _view(1, 0, **{"class": "android.widget.CheckBox", "text": 'Say  "hi"\n', "content_description": "a b",
                            "resource_id": "com.app:id/agree", "clickable": True, "long_clickable": True,
                            "editable": True, "scrollable": True, "checkable": True, "checked": True,
                            "selected": True, "focused": True, "enabled": False, "bounds": [[1, 2], [3.5, 4]]})]
    assert render_android_screen(views, "Activity: .Main") == "\n".join([
        "Activity: .Main",
        '[1] CheckBox "Say \\"hi\\"" desc="a b" id=agree '
        "{clickable,long_clickable,editable,scrollable,checkable,checked,selected,focused,disabled} @[1,2][3.5,4]"])


def test_each_flag_alone_and_views_without_class_or_bounds():
    flags = ["clickable", "long_clickable", "editable", "scrollable", "checkable"]
    views = [_view(0, -1, range(1, 6))] + [_view(i + 1, 0, **{flag: True}) for i, flag in enumerate(flags)]
    views.append(_view(6, -1, text="plain", **{"class": "Button", "selected": True, "resource_id": "no_id_part"}))
    assert render_android_screen(views) == "\n".join(
        [f"[{i + 1}] View {{{flag}}}" for i, flag in enumerate(flags)] + ['[6] Button "plain" id=no_id_part {selected}'])


def test_listed_views_nest_under_their_nearest_listed_ancestor_and_hidden_subtrees_are_left_out():
    views = [_view(0, -1, [1, 4], **{"class": "a.Layout"}),
             _view(1, 0, [2], text="list", scrollable=True),
             _view(2, 1, [3], **{"class": "a.Layout"}),  # layout only: its child moves up a level
             _view(3, 2, text="row", clickable=True),
             _view(4, 0, [5], text="hidden", visible=False),
             _view(5, 4, text="under hidden")]
    assert render_android_screen(views) == '[1] View "list" {scrollable}\n  [3] View "row" {clickable}'


def test_long_texts_are_cut_and_cycles_and_unknown_children_are_ignored():
    views = [_view(0, -1, [1, 0, 99], text="x" * 250), _view(1, 0, [0], content_description="d")]
    assert render_android_screen(views) == "\n".join([f'[0] View "{"x" * 199}…"', '  [1] View desc="d"'])


def test_ids_that_are_not_list_positions_are_looked_up():
    views = [_view(10, 11, text="child"), _view(11, -1, [10], text="root")]
    assert render_android_screen(views) == '[11] View "root"\n  [10] View "child"'
