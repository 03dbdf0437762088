import pyarrow as pa

from schemas import BRANCHES, STEPS
from tests.transforms.export.lakes import branch_row, episode_row, step_row
from transforms.export import cpt
from transforms.export.budget import TokenCounter
from transforms.export.chat import TrajectoryRenderer
from transforms.export.transitions import branches_by_episode, episode_index, trajectories

EP = "e1"


def _trajectories(rows, branches=()):
    steps = pa.Table.from_pylist(rows, schema=STEPS)
    episodes = episode_index(pa.Table.from_pylist([episode_row(EP, "terminal", "t")]))
    return list(trajectories(steps, episodes, branches_by_episode(pa.Table.from_pylist(list(branches), schema=BRANCHES))))


def _steps():
    return [step_row(EP, 0, "terminal", "$ ", {"kind": "command", "code": "ls"}),
            step_row(EP, 1, "terminal", "$ ls\na\n$ ", {"kind": "command", "code": "cat a"}),
            step_row(EP, 2, "terminal", "$ cat a\nhello\n$ ", {"kind": "done"}, final_text="bye")]


def test_turns_pair_each_action_with_the_next_observation():
    (main,) = _trajectories(_steps())
    assert main.first_state == "$ " and [t.observation for t in main.turns] == ["$ ls\na\n$ ", "$ cat a\nhello\n$ ", "bye"]
    transitions = list(main.transitions())
    assert [t.t for t in transitions] == [0, 1, 2]
    last = transitions[-1]
    assert last.target == "bye" and last.target_step_id == "e1:2" and last.step_ids == ["e1:0", "e1:1", "e1:2"]
    assert transitions[1].step_ids == ["e1:0", "e1:1", "e1:2"] and transitions[0].step_ids == ["e1:0", "e1:1"]
    assert all(t.origin == "real" for t in transitions)


def test_a_branch_is_its_own_line_starting_at_the_branch():
    branch_rows = [branch_row("e1:1", {"kind": "command", "code": "rm a"}, "$ rm a\n$ ", suffix="b")]
    main, branch = _trajectories(_steps(), branch_rows)
    assert [t.origin for t in main.turns] == ["real"] * 3  # the main line never sees the branch
    assert branch.line == "e1:1:sim-b" and branch.start == 1 and branch.trajectory_id == "e1:1:sim-b"
    (only,) = list(branch.transitions())
    assert only.t == 1 and only.target == "$ rm a\n$ " and only.origin == "simulated"
    assert only.history[0].step_id == "e1:0" and only.turn.action["code"] == "rm a"
    assert only.step_ids == ["e1:0", "e1:1:sim-b"]  # the real prefix, then the branch step (its own target)


def test_a_branch_whose_parent_is_not_in_the_version_makes_no_line():
    (main,) = _trajectories(_steps(), [branch_row("e1:7", {"kind": "command", "code": "rm a"}, "x")])
    assert main.line == "main"


def test_cpt_windows_split_long_trajectories_into_whole_turns():
    (main,) = _trajectories(_steps())
    renderer = TrajectoryRenderer(main, TokenCounter())
    assert cpt.windows(renderer, 3, None, with_system=False) == ([(0, 3)], 0)
    one_turn = renderer.turn_tokens(1, 1)
    windows, dropped = cpt.windows(renderer, 3, one_turn + 5, with_system=False)
    assert dropped == 0 and len(windows) >= 2 and windows[0][0] == 0 and windows[-1][1] == 3
    # a later window numbers its turns from 1 and says what it does not show
    first, stop = windows[1]
    later = cpt.text_record(renderer, first, stop)["text"]
    assert later.startswith(f"({first} earlier turn{'s' if first > 1 else ''} of this trajectory not shown)\n\n"
                            "### Turn 1\n**Current State:**\n")
    text = cpt.text_record(renderer, 0, 3)["text"]
    assert text.startswith("### Turn 1\n**Current State:**\n$ \n\n**Action:**\n```json\n[\n  {\n    \"keystrokes\": \"ls\\n\"")
    assert text.endswith("```json\n[]\n```\n**Environment Observation:**\nbye")


def test_a_silent_command_reads_as_no_output_in_sft_rl_and_the_labeler():
    """`touch b` prints nothing: the SFT assistant turn, the RL ground truth and the labeler's history all show
    the one documented line, and the labeler stores that line back as an empty state."""
    from transforms import agentworld
    from transforms.label.parse import parse_output

    rows = [step_row(EP, 0, "terminal", "$ ", {"kind": "command", "code": "touch b"}),
            step_row(EP, 1, "terminal", "", {"kind": "command", "code": "ls"}),
            step_row(EP, 2, "terminal", "$ ls\nb\n$ ", {"kind": "done"}, final_text="bye")]
    (main,) = _trajectories(rows)
    first = next(main.transitions())
    assert first.target == agentworld.EMPTY_OBSERVATION == "(no output)"
    assert agentworld.observation_turn("") == agentworld.observation_turn(None) == \
        "**Environment Observation:**\n(no output)"
    messages = agentworld.transition_messages("terminal", [({"kind": "command", "code": "touch b"}, "")],
                                              {"kind": "command", "code": "ls"}, "$ ")
    assert messages[2] == {"role": "assistant", "content": "**Environment Observation:**\n(no output)"}
    assert parse_output("<predicted_observation>\n(no output)\n</predicted_observation>").observation == ""


def test_a_final_answer_handed_back_is_no_transition_but_a_reply_to_it_is():
    answer = "The graph has 2 y-intercepts."
    echoed = _steps()[:2] + [step_row(EP, 2, "terminal", "$ cat a\nhello\n$ ", {"kind": "done", "text": answer},
                                      final_text=f"{answer}\n")]
    (main,) = _trajectories(echoed)
    last = main.turns[-1]
    assert last.observation is None and last.answer_echo and last.shown == f"{answer}\n"
    assert [t.t for t in main.transitions()] == [0, 1]
    # the harness's confirmation after a completion claim is the environment's reply: a transition
    confirmed = _steps()[:2] + [step_row(EP, 2, "terminal", "$ ", {"kind": "done", "text": answer},
                                         final_text="Are you sure you want to mark the task as complete?")]
    (main,) = _trajectories(confirmed)
    assert not main.turns[-1].answer_echo and [t.t for t in main.transitions()] == [0, 1, 2]
    # a reply that quotes the answer is the other side speaking (a user rating it): a transition
    quoted = _steps()[:2] + [step_row(EP, 2, "terminal", "$ ", {"kind": "message", "text": answer},
                                      final_text=f"Rate this answer:\n\n{answer}")]
    (main,) = _trajectories(quoted)
    assert [t.t for t in main.transitions()] == [0, 1, 2]
