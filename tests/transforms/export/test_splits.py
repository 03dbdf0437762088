from transforms.export import splits


def test_group_key_prefers_app_then_site_then_task():
    assert splits.group_key("android", "t", {"app_package": "com.x"}, None, "e1") == "android:app_package=com.x"
    assert splits.group_key("web", None, {}, "https://shop.example.com/a?b", "e1") == "web:site=shop.example.com"
    assert splits.group_key("terminal", "  Fix  The Build ", {}, None, "e1") == "terminal:task=fix the build"
    assert splits.group_key("os", None, {}, None, "e9") == "os:episode=e9"


def test_groups_and_clusters_keep_components_whole_and_assignment_is_stable():
    groups = {f"e{i}": f"terminal:task={i % 10}" for i in range(100)}
    clusters = [("c1", "e1"), ("c1", "e2"), ("c2", "e3"), ("c2", "e47")]
    a = splits.assign(groups, clusters, ratios=(0.4, 0.3, 0.3))
    assert a == splits.assign(dict(reversed(list(groups.items()))), clusters, ratios=(0.4, 0.3, 0.3))
    for i in range(100):  # same task -> same split
        assert a[f"e{i}"] == a[f"e{i % 10}"]
    assert a["e1"] == a["e2"] and a["e3"] == a["e47"]  # joined by the dedup clusters
    assert set(a.values()) == {"train", "validation", "test"}
    # adding unrelated episodes never moves existing ones
    more = {**groups, "x1": "web:site=a.com", "x2": "web:site=b.com"}
    assert {e: s for e, s in splits.assign(more, clusters, ratios=(0.4, 0.3, 0.3)).items() if e in a} == a


def test_held_out_matches_episode_task_or_group_value():
    assert splits.is_held_out({"com.x"}, "e1", None, "android:app_package=com.x")
    assert splits.is_held_out({"the task"}, "e1", "the task", "g")
    assert not splits.is_held_out(set(), "e1", "the task", "g")


def test_split_shares_follow_the_ratios_and_the_seed_reshuffles_them():
    from collections import Counter

    from pipelines.infra.options import ExportOptions

    groups = {f"e{i}": f"terminal:task={i}" for i in range(4000)}
    a = splits.assign(groups, ratios=(0.6, 0.1, 0.3))
    shares = {split: n / len(groups) for split, n in Counter(a.values()).items()}
    assert abs(shares["train"] - 0.6) < 0.03 and abs(shares["validation"] - 0.1) < 0.03
    assert abs(shares["test"] - 0.3) < 0.03
    # the default seed is the export's default (none): a direct call and an export agree
    assert ExportOptions().seed == "" and splits.assign(groups, seed="", ratios=(0.6, 0.1, 0.3)) == a
    salted = splits.assign(groups, seed="run-2", ratios=(0.6, 0.1, 0.3))
    assert sum(a[e] != salted[e] for e in groups) > len(groups) / 4
