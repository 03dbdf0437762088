import pytest

from transforms.label.branch_points import choose


def test_modes_on_the_droidbot_run(droidbot_steps):
    episode_id, steps = droidbot_steps
    # Only steps 0-3 have a resolved screen; step 1's action (open_app) changed the screen, step 0's
    # (kill_app) did not, and step 3's next screen was not captured.
    assert choose(episode_id, steps, "every") == [0, 1, 2, 3]
    assert choose(episode_id, steps, "changed") == [1, 2]
    picked = choose(episode_id, steps, "random", k=2, seed=0)
    assert len(picked) == 2 and set(picked) <= {0, 1, 2, 3} and picked == sorted(picked)


def test_random_is_deterministic_per_seed_and_episode(droidbot_steps):
    episode_id, steps = droidbot_steps
    draws = {seed: tuple(choose(episode_id, steps, "random", k=2, seed=seed)) for seed in range(20)}
    assert all(choose(episode_id, steps, "random", k=2, seed=s) == list(d) for s, d in draws.items())
    assert len(set(draws.values())) > 1  # the seed matters
    assert choose(episode_id, steps, "random", k=9) == [0, 1, 2, 3]  # K above the candidates: all of them


def test_bad_mode():
    with pytest.raises(ValueError, match="unknown branch point mode"):
        choose("e", [], "all")
