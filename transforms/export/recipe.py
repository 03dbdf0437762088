"""The AgentWorld data recipe: which trajectories and turns an export keeps, which CPT turns carry the loss,
and which system-prompt variant each record gets. Pure decisions over `transitions.Trajectory`; the
export (`pipelines.stages.export`) applies them and counts every one in its manifest and `export_rows`.

Sources. The steps and their values are those of the Qwen-AgentWorld technical report (arXiv 2606.24597,
section 3 "Training Recipe"), as summarised in secondary sources; the copies of the report the project
could search show its abstract and section list, not the section's numbers, so each number below is
marked with where it comes from: "report" (as the summary gives it) or "ours" (a choice the summary
leaves open, made here and said so).

Steps (each an export option; `--recipe agentworld` turns them all on with these defaults):

1. Trajectory filters (`drop_trajectory`): fewer than `min_turns` turns left after the turn filters
   (report: 2); an MCP/SWE trajectory that calls a tool its recorded definitions (`env.tools`, the list
   the exporter shows as `{tool_definitions}`) do not declare (MCP protocol methods such as
   `resources/read` are not tools; a trajectory that recorded no definitions cannot be judged and is kept);
   a GUI (android, web, os) trajectory whose environment failed: the episode records an environment
   error (`env.error`, e.g. BrowserGym's uncaught exception) or an observation is missing after an error
   (a step whose next state was never recorded and is flagged `is_error`).
2. Turn filters (`dropped_turns`), decided on the recorded sequence: an empty action (no kind and no
   content, or a text/code action whose text is blank); a retry cycle (see `is_retried`); a GUI
   turn the dedup stage recorded as changing nothing (`dedup_no_change`). A dropped turn leaves the
   record whole: the turns before and after it stay, and the state chain holds because each of these
   turns left the state as it was (a failed attempt, a no-op).
3. CPT turn-level loss masking (`turn_category`, `keeps_loss`): each (action, observation) pair is put in
   a category by word-set overlap OL = |W_act ∩ W_obs| / |W_act|, novelty Nov = |W_obs \\ W_act| / |W_obs|
   and length ratio R = |obs| / |act| (words), and keeps the loss with the category's rate, decided by
   xxh64(seed, step id) so a rerun decides the same. A masked turn stays in the document without loss.
4. Prompt-template variants (`PromptVariants`), used disjointly: one for RL, one for CPT, and SFT records
   pick one of the rest per record (xxh64(seed, record id)).
5. Screenshot-only states in history (`screenshot_states`, `transforms.export.screenshot_states`; ours, no
   named recipe sets it): `no-output`, `placeholder` naming the blob, or `drop` with the actions folded into
   the next turn. Unset, it is not recorded, so the manifests of the other recipes stay as they were.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import xxhash

from transforms import agentworld
from transforms.export import screenshot_states as shots
from transforms.export.transitions import Trajectory, Turn

# --- CPT loss masking ---------------------------------------------------------------------------------
# Keep rates per category (report): information-rich observations keep all their loss; re-statements of
# the action lose most of it.
KEEP_RATES = {"retrieval": 1.0, "expansion": 1.0, "action": 1.0, "transform": 0.5, "boilerplate": 0.1,
              "echo": 0.05, "other": 1.0}
CATEGORIES = tuple(KEEP_RATES)
# "short" in the action category (Nov >= 0.5 and R <= 1 or short): the summary gives no number; ours:
# an observation of fewer than 8 words is a short acknowledgement however long the action was.
SHORT_OBSERVATION_WORDS = 8
# Words: runs of letters, digits and underscores (ASCII punctuation and whitespace separate them; other
# scripts' punctuation stays attached). str.translate + split, not a regex: the same words for ASCII text at a
# fraction of the cost, which matters as every turn of a CPT export is measured.
_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
# The same for ASCII text (nearly every turn) in one bytes.translate pass: A-Z lowered, the separators spaced;
# the words are the same, as bytes, some 4x faster than lower + str.translate.
_ASCII_WORDS = bytes.maketrans(bytes(range(128)), bytes(
    ord(c.lower()) if c.isalnum() or c == "_" else ord(" ") for c in map(chr, range(128))))


def words(text: str) -> list[str]:
    return text.lower().translate(_SEPARATORS).split()


def _ascii_words(text: str) -> list[bytes]:
    return text.encode().translate(_ASCII_WORDS).split()


def _word_lists(action: str, observation: str) -> tuple[list, list]:
    """`words` of both texts, as bytes when both are ASCII (sets of the two must hold one type)."""
    if action.isascii() and observation.isascii():
        return _ascii_words(action), _ascii_words(observation)
    return words(action), words(observation)


def measures(action: str, observation: str) -> tuple[float, float, float, int]:
    """(OL, Nov, R, observation words) of one turn's action and observation texts."""
    act, obs = _word_lists(action, observation)
    return _measures(set(act), len(act), obs)


def _measures(w_act: set | frozenset, n_act: int, obs: list) -> tuple[float, float, float, int]:
    """`measures` from the action's distinct words and word count and the observation's words."""
    w_obs = set(obs)
    shared = len(w_act & w_obs)
    overlap = shared / len(w_act) if w_act else 0.0
    novelty = (len(w_obs) - shared) / len(w_obs) if w_obs else 0.0  # |W_obs \ W_act|
    ratio = len(obs) / n_act if n_act else float("inf") if obs else 0.0
    return overlap, novelty, ratio, len(obs)


# Agents repeat their actions (a command, a key, a tap on the same element): a masking export measures each
# distinct short action block once. Bounded: cleared when full; long blocks (edits, scripts) are not kept.
_ACTION_WORDS: dict[tuple[str, bool], tuple[frozenset, int]] = {}
_ACTION_WORDS_MAX, _ACTION_BLOCK_MAX_CHARS = 50_000, 1024


def _action_words(block: str, as_bytes: bool) -> tuple[frozenset, int]:
    """(distinct words, word count) of a rendered action block's action, as bytes or as text."""
    key = (block, as_bytes)
    found = _ACTION_WORDS.get(key)
    if found is None:
        text = action_text(block)
        act = _ascii_words(text) if as_bytes else words(text)
        found = (frozenset(act), len(act))
        if len(block) <= _ACTION_BLOCK_MAX_CHARS:
            if len(_ACTION_WORDS) >= _ACTION_WORDS_MAX:
                _ACTION_WORDS.clear()
            _ACTION_WORDS[key] = found
    return found


def turn_category(action: str, observation: str) -> str:
    """The category of a turn. The report's conditions overlap, so they are tried from the most specific
    (echo inside boilerplate) to the widest; the first that holds wins (order: ours)."""
    return _category(*measures(action, observation))


def _category(ol: float, nov: float, r: float, n_obs: int) -> str:
    if ol >= 0.7 and nov < 0.3:
        return "echo"
    if ol >= 0.5 and nov < 0.5:
        return "boilerplate"
    if ol >= 0.5 and nov >= 0.5 and r > 1.5:
        return "expansion"
    if nov >= 0.6 and r > 1:
        return "retrieval"
    if nov >= 0.5 and (r <= 1 or n_obs < SHORT_OBSERVATION_WORDS):
        return "action"
    if nov < 0.5 and r < 1:
        return "transform"
    return "other"


def keeps_loss(step_id: str, rate: float, seed: str = "") -> bool:
    """Whether a turn of keep rate `rate` carries the loss: a seeded hash of its step id, so the same
    export decides the same and a changed seed draws again."""
    if rate >= 1:
        return True
    return xxhash.xxh64_intdigest(f"{seed}\x00{step_id}".encode()) / 2**64 < rate


# --- trajectory and turn filters --------------------------------------------------------------------
TOOL_DECLARING_DOMAINS = ("mcp", "swe")  # report: "MCP/SWE trajectories that call undeclared tools"
GUI_DOMAINS = ("android", "web", "os")
TRAJECTORY_FILTERS = ("fewer_than_min_turns", "undeclared_tools", "environment_failure")
TURN_FILTERS = ("empty_action", "retry_cycle", "no_change")
_CONTENT_FIELDS = ("x", "y", "text", "keys", "element", "direction", "tool_name", "arguments", "code")
_TEXT_OF_KIND = {"type": "text", "keystrokes": "text", "message": "text", "command": "code", "code": "code"}
# Observations that say the environment refused the action and left the state as it was, in the words of
# the agents that print them (SWE-agent's edit linter; MCP servers' unknown-tool replies). An observation
# flagged `is_error` or with a non-zero exit code needs no phrase.
REFUSED = ("your proposed edit has introduced new syntax error", "your changes have not been applied",
           "unknown tool:", "error executing tool")


def is_empty_action(action: dict) -> bool:
    kind = action.get("kind")
    if not kind:
        return not any(action.get(f) not in (None, "", []) for f in _CONTENT_FIELDS)
    field_name = _TEXT_OF_KIND.get(kind)
    if field_name is None:
        return False
    text = action.get(field_name)
    return not text or text.isspace()


def is_refused(turn: Turn) -> bool:
    """Whether the observation after the turn reports a failed action."""
    if turn.observation_error:
        return True
    # the refusals open the observation: its head is enough (and a long screen is not lowercased whole)
    text = (turn.observation or "")[:2048].lower()
    for phrase in REFUSED:  # a loop, not any(generator): every turn of a recipe export is looked at
        if phrase in text:
            return True
    return False


def _attempt(action: dict) -> str:
    """What a retry repeats: a command's or keystrokes' program (first word), else the tool called, else the
    kind."""
    kind = action.get("kind")
    program = action.get("code") if kind == "command" else action.get("text") if kind == "keystrokes" else None
    if program and program.split():
        return f"{kind}:{program.split()[0]}"
    call = agentworld.tool_call(action)
    return f"{kind}:{call[0] if call else ''}"


def is_retried(turns: list[Turn], i: int) -> bool:
    """Whether turn i is a failed attempt of a retry cycle: its observation reports a failure (`is_refused`)
    and turn i+1 attempts the same thing (`_attempt`: same tool, program or kind). A loop of failed attempts
    drops all but the last attempt, which stays with its outcome; the state before the first failed attempt
    is the state the kept attempt acted on, since a refused action changes nothing."""
    return (i + 1 < len(turns) and is_refused(turns[i])
            and _attempt(turns[i].action) == _attempt(turns[i + 1].action))


def undeclared_tools(trajectory: Trajectory) -> list[str]:
    """Tools the trajectory calls that its recorded definitions do not declare ([] when it recorded none)."""
    tools = trajectory.tools
    if not tools:
        return []
    # definitions ({"name": ...}) as MCP's tools/list records them, or bare names (OpenHands V1 records its
    # SDK tools' titles)
    declared = {t.get("name") if isinstance(t, dict) else t for t in tools if isinstance(t, (dict, str))}
    called = []
    for turn in trajectory.turns:
        call = agentworld.tool_call(turn.action)
        if call and call[0] not in declared and "/" not in call[0] and call[0] not in called:
            called.append(call[0])
    return called


def environment_failed(trajectory: Trajectory) -> bool:
    error = trajectory.env.get("error")
    if isinstance(error, str) and error.strip():
        return True
    return any(turn.observation is None and turn.observation_error for turn in trajectory.turns)


@dataclass(frozen=True)
class Recipe:
    """The resolved recipe options (None in `ExportOptions` means: the named recipe's default, or off)."""

    name: str | None = None
    min_turns: int = 0
    drop_undeclared_tools: bool = False
    drop_environment_failures: bool = False
    drop_empty_actions: bool = False
    skip_retry_cycles: bool = False
    drop_no_change: bool = False
    loss_mask: bool = False
    keep_rates: dict = field(default_factory=lambda: dict(KEEP_RATES))
    prompt_variants: bool = False
    variants_dir: str | None = None
    seed: str = ""
    screenshot_states: str | None = None  # None: `shots.DEFAULT`, and nothing recorded

    @property
    def active(self) -> bool:
        return bool(self.min_turns or self.drop_undeclared_tools or self.drop_environment_failures
                    or self.drop_empty_actions or self.skip_retry_cycles or self.drop_no_change
                    or self.loss_mask or self.prompt_variants or self.screenshot_states is not None)


# the named recipes: each step's default (report)
RECIPES = {"agentworld": dict(min_turns=2, drop_undeclared_tools=True, drop_environment_failures=True,
                              drop_empty_actions=True, skip_retry_cycles=True, drop_no_change=True,
                              loss_mask=True, prompt_variants=True)}


def resolve(options: dict, seed: str = "") -> Recipe:
    """A Recipe from the export's recipe options (`recipe`, each step's option; None = the named recipe's
    default, or off). ValueError for an unknown recipe, category or rate, or unreadable variants."""
    name = options.get("recipe")
    if name is not None and name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r} (recipes: {', '.join(RECIPES)})")
    defaults = RECIPES.get(name, {})
    values = {}
    for key in ("min_turns", "drop_undeclared_tools", "drop_environment_failures", "drop_empty_actions",
                "skip_retry_cycles", "drop_no_change", "loss_mask", "prompt_variants"):
        value = options.get(key)
        values[key] = value if value is not None else defaults.get(key, Recipe.__dataclass_fields__[key].default)
    rates = dict(KEEP_RATES)
    for category, rate in (options.get("keep_rates") or {}).items():
        if category not in KEEP_RATES:
            raise ValueError(f"keep_rates: unknown category {category!r} (categories: {', '.join(CATEGORIES)})")
        if not 0 <= rate <= 1:
            raise ValueError(f"keep_rates: {category} rate {rate} is not within [0, 1]")
        rates[category] = rate
    variants_dir = options.get("prompt_variants_dir")
    if variants_dir is not None and options.get("prompt_variants") is None:
        values["prompt_variants"] = True  # a folder of variants asks for them
    if variants_dir is not None and values["prompt_variants"]:
        load_variants(variants_dir)  # fail before anything runs
    screenshot_states = options.get("screenshot_states")
    if screenshot_states is not None and screenshot_states not in shots.MODES:
        raise ValueError(f"screenshot_states: unknown mode {screenshot_states!r} (modes: {', '.join(shots.MODES)})")
    return Recipe(name=name, keep_rates=rates, variants_dir=variants_dir, seed=seed,
                  screenshot_states=screenshot_states, **values)


def dropped_turns(trajectory: Trajectory, recipe: Recipe, no_change: set[str] | frozenset = frozenset()
                  ) -> dict[int, str]:
    """turn index -> the filter that drops it (the first of TURN_FILTERS that applies)."""
    out: dict[int, str] = {}
    turns = trajectory.turns
    empty, retries = recipe.drop_empty_actions, recipe.skip_retry_cycles
    unchanged = no_change if recipe.drop_no_change and trajectory.domain in GUI_DOMAINS else ()
    for i, turn in enumerate(turns):
        if empty and is_empty_action(turn.action):
            out[i] = "empty_action"
        elif retries and is_retried(turns, i):
            out[i] = "retry_cycle"
        elif unchanged and turn.step_id in unchanged:
            out[i] = "no_change"
    return out


def drop_trajectory(trajectory: Trajectory, kept_turns: int, recipe: Recipe) -> str | None:
    """The trajectory filter that drops the whole trajectory, or None."""
    if recipe.drop_undeclared_tools and trajectory.domain in TOOL_DECLARING_DOMAINS and undeclared_tools(trajectory):
        return "undeclared_tools"
    if recipe.drop_environment_failures and trajectory.domain in GUI_DOMAINS and environment_failed(trajectory):
        return "environment_failure"
    if kept_turns < recipe.min_turns:
        return "fewer_than_min_turns"
    return None


# --- prompt-template variants -----------------------------------------------------------------------
VARIANTS_DIR = Path(__file__).resolve().parent / "prompt_variants"
ROLE_FILES = {"rl": "rl.txt", "cpt": "cpt.txt"}  # the other *.txt files form the SFT pool


@dataclass(frozen=True)
class PromptVariants:
    """Variant templates by name: a template is text with `{system_prompt}` (the domain's reference system
    prompt, tools filled) and optionally `{domain}`. `rl` and `cpt` name the variants those exports use;
    `sft` the pool SFT records draw from. The pools are disjoint by construction."""

    templates: dict[str, str]
    rl: str
    cpt: str
    sft: tuple[str, ...]

    def render(self, name: str, system: str, domain: str) -> str:
        return self.templates[name].replace("{domain}", domain).replace("{system_prompt}", system)

    def for_record(self, kind: str, record_id: str, seed: str = "") -> str:
        if kind == "rl":
            return self.rl
        if kind == "cpt":
            return self.cpt
        return self.sft[xxhash.xxh64_intdigest(f"{seed}\x00{record_id}".encode()) % len(self.sft)]


def _read_folder(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.txt")) if p.is_file()}


def load_variants(user_dir: str | None = None) -> PromptVariants:
    """The bundled variants (`prompt_variants/`: rl = the reference prompt verbatim, cpt, and the SFT pool),
    with the files of `user_dir` over them: its `rl.txt` / `cpt.txt` replace those roles, any other `*.txt`
    joins (or replaces, by name) the SFT pool. ValueError when a template lacks `{system_prompt}` or the
    SFT pool is empty."""
    files = _read_folder(VARIANTS_DIR)
    if user_dir:
        folder = Path(user_dir)
        if not folder.is_dir():
            raise ValueError(f"prompt variants folder {user_dir!r} is not a folder")
        files.update(_read_folder(folder))
    for name, text in files.items():
        if "{system_prompt}" not in text:
            raise ValueError(f"prompt variant {name!r} has no {{system_prompt}} placeholder")
    names = {role: Path(f).stem for role, f in ROLE_FILES.items()}
    sft = tuple(sorted(n for n in files if n not in names.values()))
    if not sft:
        raise ValueError("no SFT prompt variants (every *.txt other than rl.txt and cpt.txt is one)")
    return PromptVariants(files, names["rl"], names["cpt"], sft)


# --- applying the recipe to one trajectory, with the counts the manifest shows ---------------------------
@dataclass
class Counts:
    """Every recipe decision of an export. Turns are counted on the turns a line owns (from its `start`:
    a branch line's shared prefix belongs to the main line), so turns_in = turns_kept + masked + dropped."""

    trajectories_in: int = 0
    trajectories_dropped: dict = field(default_factory=lambda: dict.fromkeys(TRAJECTORY_FILTERS, 0))
    turns_in: int = 0
    turns_kept: int = 0
    turns_masked: dict = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    turns_dropped: dict = field(default_factory=lambda: {**dict.fromkeys(TURN_FILTERS, 0),
                                                         **{f"trajectory:{f}": 0 for f in TRAJECTORY_FILTERS}})
    categories: dict = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))  # CPT: every kept turn's
    variants: dict = field(default_factory=dict)  # prompt variant -> records
    # with `screenshot_states` set: {"mode", "states": screenshot-only states shown as the mode says}
    screenshot_states: dict | None = None

    def add(self, other: "Counts") -> None:
        self.trajectories_in += other.trajectories_in
        self.turns_in += other.turns_in
        self.turns_kept += other.turns_kept
        if other.screenshot_states is not None:
            if self.screenshot_states is None:
                self.screenshot_states = {**other.screenshot_states, "states": 0}
            self.screenshot_states["states"] += other.screenshot_states["states"]
        for mine, theirs in ((self.trajectories_dropped, other.trajectories_dropped),
                             (self.turns_masked, other.turns_masked), (self.turns_dropped, other.turns_dropped),
                             (self.categories, other.categories), (self.variants, other.variants)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n

    def manifest(self) -> dict:
        out = {"trajectories_in": self.trajectories_in, "trajectories_dropped": self.trajectories_dropped,
               "turns_in": self.turns_in, "turns_kept": self.turns_kept, "turns_masked": self.turns_masked,
               "turns_dropped": self.turns_dropped, "turn_categories": self.categories,
               "prompt_variants": dict(sorted(self.variants.items()))}
        if self.screenshot_states is not None:
            out["screenshot_states"] = self.screenshot_states
        return out


@dataclass
class Applied:
    trajectory: Trajectory  # the kept turns; `start` counted in kept turns
    original: list[int]  # the recorded index of each kept turn
    dropped: list[tuple[int, str]]  # (recorded index, step id) of each dropped turn
    loss: list[bool] | None = None  # CPT with masking: whether each kept turn carries the loss
    own_from: int = 0  # the recorded index of the line's first own turn (before it: the main line's prefix)

    def own_dropped(self) -> list[tuple[int, str]]:
        """(recorded index, step id) of the dropped turns of the line's own."""
        return [(i, step_id) for i, step_id in self.dropped if i >= self.own_from]

    def dropped_by_records(self, lasts: list[int]) -> list[list[str]]:
        """Step ids of the line's own dropped turns that each of its records names, given each record's last
        kept turn, in the records' order: a record names those after the previous record's last turn up to its
        own, the line's last record also those after it (trailing, or between two CPT windows). So each dropped
        turn of a line with records is named once; the shared prefix's are the main line's."""
        own = self.own_dropped()
        named, at = [], 0
        for n, last in enumerate(lasts):
            bound = self.original[last] if n < len(lasts) - 1 else len(self.original) + len(self.dropped)
            names = []
            while at < len(own) and own[at][0] < bound:
                names.append(own[at][1])
                at += 1
            named.append(names)
        return named


@dataclass(frozen=True)
class DroppedTrajectory:
    """A line a trajectory filter dropped, as the export's lineage names it: its episode, its line ("main" or
    the branch's step id), the filter, and the step ids of its own turns (each counted in `turns_dropped`)."""

    episode_id: str
    line: str
    dropped_by: str
    step_ids: list[str]


def apply(trajectory: Trajectory, recipe: Recipe, counts: Counts, no_change: set[str] | frozenset = frozenset(),
          dropped_trajectories: list[DroppedTrajectory] | None = None) -> Applied | None:
    """The trajectory with the recipe's turn filters applied, or None when a trajectory filter drops it (then
    appended to `dropped_trajectories`, when given); every decision counted in `counts` (the CPT loss:
    `mask_turns`). `show_screenshots` comes first."""
    turns = trajectory.turns
    own = range(trajectory.start, len(turns))
    counts.trajectories_in += 1
    counts.turns_in += len(own)
    drops = dropped_turns(trajectory, recipe, no_change)
    kept = [i for i in range(len(turns)) if i not in drops]
    reason = drop_trajectory(trajectory, len(kept), recipe)
    if reason:
        counts.trajectories_dropped[reason] += 1
        for i in own:
            counts.turns_dropped[drops.get(i, f"trajectory:{reason}")] += 1
        if dropped_trajectories is not None:
            dropped_trajectories.append(DroppedTrajectory(trajectory.episode_id, trajectory.line, reason,
                                                          [turns[i].step_id for i in own]))
        return None
    for i in own:
        if i in drops:
            counts.turns_dropped[drops[i]] += 1
    start = sum(1 for i in kept if i < trajectory.start)
    filtered = trajectory
    if drops:  # a copy with the kept turns (`dataclasses.replace` costs several times more, every trajectory)
        filtered = copy.copy(trajectory)
        filtered.turns, filtered.start = [turns[i] for i in kept], start
    return Applied(filtered, kept, sorted((i, turns[i].step_id) for i in drops), own_from=trajectory.start)


def show_screenshots(trajectory: Trajectory, recipe: Recipe, counts: Counts) -> Trajectory:
    """The trajectory with its screenshot-only states shown as the recipe's `screenshot_states` says (before the
    turn filters: a folded run of turns is one turn to them), the states it changed counted."""
    if recipe.screenshot_states is None:
        return trajectory
    trajectory, changed = shots.apply(trajectory, recipe.screenshot_states)
    if counts.screenshot_states is None:
        counts.screenshot_states = {"mode": recipe.screenshot_states, "states": 0}
    counts.screenshot_states["states"] += changed
    return trajectory


def action_text(block: str) -> str:
    """The action of a rendered `agentworld.action_block`, without its `**Action:**` heading and fence (the
    text between its second and its last line break)."""
    first = block.find("\n", block.find("\n") + 1)
    last = block.rfind("\n")
    return block[first + 1:last] if 0 <= first < last else ""


def mask_turns(applied: Applied, action_blocks: list[str], recipe: Recipe, counts: Counts, end: int) -> None:
    """CPT: decide each kept turn's loss (`applied.loss`) from its category's keep rate, and count the
    owned turns as kept or masked. `action_blocks[j]`: kept turn j's rendered action block; `end`: the
    turns a document can hold (the admissible prefix): the turns after it have no observation to mask and
    count as kept."""
    turns, start = applied.trajectory.turns, applied.trajectory.start
    rates, seed, categories, masked = recipe.keep_rates, recipe.seed, counts.categories, counts.turns_masked
    action_words = _action_words
    loss = [True] * len(turns)  # the turns after `end` keep theirs
    for j in range(min(end, len(turns))):
        turn = turns[j]
        observation = turn.observation
        if not observation or observation.isspace():  # `agentworld.observation_text`, without copying the text
            observation = agentworld.EMPTY_OBSERVATION
        block = action_blocks[j]
        if block.isascii() and observation.isascii():  # the heading and fence are ASCII
            w_act, n_act = action_words(block, True)
            obs = observation.encode().translate(_ASCII_WORDS).split()  # `_ascii_words`, inline: every turn
        else:
            w_act, n_act = action_words(block, False)
            obs = words(observation)
        category = _category(*_measures(w_act, n_act, obs))
        keep = keeps_loss(turn.step_id, rates[category], seed)
        loss[j] = keep
        if j >= start:
            categories[category] += 1
            if not keep:
                masked[category] += 1
    counts.turns_kept += loss[start:].count(True)
    applied.loss = loss


def count_kept(applied: Applied, counts: Counts) -> None:
    """SFT / RL (no loss masking): every owned kept turn is kept."""
    counts.turns_kept += len(applied.trajectory.turns) - applied.trajectory.start


class Prompted:
    """One trajectory's renderers per prompt variant of an export kind (the reference renderer's system
    prompt wrapped by each variant template, built on first use)."""

    def __init__(self, renderer, variants: PromptVariants, kind: str, seed: str = "", rendered: dict | None = None):
        """`rendered`: (variant, reference prompt, domain) -> the variant's prompt, shared by the trajectories
        of an export (most share their domain's prompt, a long text to fill again for each)."""
        self.renderer, self.variants, self.kind, self.seed = renderer, variants, kind, seed
        self._renderers: dict = {}
        self._rendered = {} if rendered is None else rendered

    def for_record(self, record_id: str):
        """(variant name, the renderer with its system prompt) for one record."""
        name = self.variants.for_record(self.kind, record_id, self.seed)
        if name not in self._renderers:
            key = (name, self.renderer.system, self.renderer.trajectory.domain)
            system = self._rendered.get(key)
            if system is None:
                system = self._rendered[key] = self.variants.render(*key)
            self._renderers[name] = self.renderer.with_system(system)
        return name, self._renderers[name]


def steps(recipe: Recipe) -> dict:
    """The recipe's resolved steps, as the manifest records them."""
    return {"min_turns": recipe.min_turns, "drop_undeclared_tools": recipe.drop_undeclared_tools,
            "drop_environment_failures": recipe.drop_environment_failures,
            "drop_empty_actions": recipe.drop_empty_actions, "skip_retry_cycles": recipe.skip_retry_cycles,
            "drop_no_change": recipe.drop_no_change, "loss_mask": recipe.loss_mask,
            "keep_rates": recipe.keep_rates, "prompt_variants": recipe.prompt_variants,
            "prompt_variants_dir": recipe.variants_dir, "seed": recipe.seed,
            **({"screenshot_states": recipe.screenshot_states} if recipe.screenshot_states is not None else {})}
