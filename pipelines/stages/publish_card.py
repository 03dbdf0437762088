"""The dataset card of a published export or dataset (`pipelines.stages.publish`): what its episodes came from
(`Sources`: each source format with its producer and version, each license, the sources without one) and the
card itself, a README.md whose YAML header is the Hub's dataset metadata (configs, splits, features, license,
task categories) and whose body lists the sources, the licenses, the recipe and the counts.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import orjson

# source format -> (producer, env path of the producer's name or None, env path of its version or None);
# the paths are where each reader keeps what the trace says about its producer (`env`)
PRODUCERS: dict[str, tuple[str, str | None, str | None]] = {
    "droidbot": ("DroidBot", None, None),
    "getevent": ("adb getevent", None, None),
    "uiautomator": ("UI Automator", None, None),
    "aitw": ("Android in the Wild", None, None),
    "androidcontrol": ("AndroidControl", None, None),
    "androidworld": ("AndroidWorld", None, None),
    "atif": ("Harbor (ATIF)", "agent.name", "agent.version"),
    "claude_code": ("Claude Code", None, "claude_code.version"),
    "codex": ("Codex CLI", None, "codex.session.cli_version"),
    "har": ("HAR recorder", "recorder", "recorder_version"),
    "playwright_trace": ("Playwright", None, "playwright_version"),
    "cdp": ("Chrome DevTools Protocol", None, None),
    "browsergym": ("BrowserGym / AgentLab", None, "browsergym_version"),
    "asciicast": ("asciinema", None, "asciicast_version"),
    "terminal_bench": ("Terminal-Bench", None, None),
    "osworld": ("OSWorld", None, None),
    "agentnet": ("AgentNet", None, None),
    "agentnet_recording": ("AgentNet recorder", None, None),
    "mcp_jsonrpc": ("MCP client", "client.clientInfo.name", "client.clientInfo.version"),
    "mcp_sdk": ("MCP SDK", "server.serverInfo.name", "server.serverInfo.version"),
    "mcp_proxy_log": ("MCP proxy", None, None),
    "mcp_audit_log": ("MCP gateway", None, None),
    "agentworldbench": ("AgentWorldBench", None, None),
    "inspect_log": ("Inspect AI", None, "inspect_version"),
    "sweagent": ("SWE-agent", None, None),
    "openhands": ("OpenHands", None, None),
    "openhands_v1": ("OpenHands SDK", None, None),
    "minisweagent": ("mini-swe-agent", None, "mini_swe_agent_version"),
}
NOT_RECORDED = "not recorded"
# the Hub's license ids are SPDX ids in lower case; a license not among them is `other`
HUB_LICENSES = {"apache-2.0", "mit", "bsd-3-clause", "bsd-2-clause", "isc", "cc-by-4.0", "cc-by-sa-4.0",
                "cc-by-nc-4.0", "cc0-1.0", "mpl-2.0", "gpl-2.0", "gpl-3.0", "lgpl-2.1", "lgpl-3.0", "agpl-3.0",
                "unlicense", "odc-by"}
SHOWN = 50  # unlicensed sources listed by name in the card (all of them are in `publish.json`)
SOURCES_SHOWN = 200  # up to this many sources, the card lists each with its license


def _at(env: dict, path: str | None):
    value = env
    for key in (path or "").split(".") if path else []:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def producer(source_format: str, env_json: str | None) -> tuple[str, str]:
    """(producer, version) of one episode, as its trace records them; the version `not recorded` when it
    does not."""
    default, name_path, version_path = PRODUCERS.get(source_format, (source_format, None, None))
    try:
        env = orjson.loads(env_json) if env_json else {}
    except orjson.JSONDecodeError:
        env = {}
    env = env if isinstance(env, dict) else {}
    name, version = _at(env, name_path), _at(env, version_path)
    return (str(name) if name is not None else default), (str(version) if version is not None else NOT_RECORDED)


@dataclass
class Sources:
    """What the published rows were made from, by episode."""

    formats: dict[str, dict] = field(default_factory=dict)  # format -> producers, versions, readers, episodes
    licenses: dict[str, dict] = field(default_factory=dict)  # license -> episodes, sources
    unlicensed: list[str] = field(default_factory=list)  # source URIs whose episodes have no license
    by_source: dict[str, str] = field(default_factory=dict)  # source URI -> its license(s), "none" without
    episodes: int = 0
    overridden: int = 0  # episodes whose license came from a --license rule


def sources(rows: list[dict], overrides: list[tuple[str, str]] = ()) -> Sources:
    """`rows`: episodes (source_format, source_uri, license, ingestor_version, env); `overrides`: (glob over
    source_uri, license) for episodes whose data and inputs named none, the first match wins."""
    out = Sources()
    by_license: dict[str, set] = {}
    unlicensed = set()
    for row in rows:
        license_, uri = row["license"], row["source_uri"]
        if license_ is None:
            license_ = next((lic for pattern, lic in overrides if fnmatch.fnmatchcase(uri, pattern)), None)
            out.overridden += license_ is not None
        fmt = out.formats.setdefault(row["source_format"], {"producers": {}, "readers": set(), "episodes": 0,
                                                            "licenses": {}})
        name, version = producer(row["source_format"], row.get("env"))
        fmt["producers"].setdefault(name, set()).add(version)
        fmt["readers"].add(row["ingestor_version"])
        fmt["episodes"] += 1
        key = license_ or "none"
        fmt["licenses"][key] = fmt["licenses"].get(key, 0) + 1
        held = out.by_source.get(uri)
        out.by_source[uri] = key if held in (None, key) else " + ".join(sorted({*held.split(" + "), key}))
        if license_ is None:
            unlicensed.add(uri)
        else:
            entry = out.licenses.setdefault(license_, {"episodes": 0, "sources": 0})
            entry["episodes"] += 1
            by_license.setdefault(license_, set()).add(uri)
        out.episodes += 1
    for license_, uris in by_license.items():
        out.licenses[license_]["sources"] = len(uris)
    out.unlicensed = sorted(unlicensed)
    out.by_source = dict(sorted(out.by_source.items()))
    out.formats = dict(sorted(out.formats.items()))
    return out


def as_json(s: Sources) -> dict:
    return {"episodes": s.episodes, "licenses": dict(sorted(s.licenses.items())), "unlicensed": s.unlicensed,
            "licenses_from_rules": s.overridden, "by_source": s.by_source,
            "formats": {f: {"producers": {p: sorted(v) for p, v in sorted(d["producers"].items())},
                            "readers": sorted(d["readers"]), "episodes": d["episodes"],
                            "licenses": dict(sorted(d["licenses"].items()))} for f, d in s.formats.items()}}


def hub_license(s: Sources) -> dict:
    """The card's `license` keys: the one license of every episode in the Hub's spelling, else `other` with a
    `license_name` saying which."""
    names = sorted(s.licenses) + (["none"] if s.unlicensed else [])
    if len(names) == 1 and names[0].lower() in HUB_LICENSES:
        return {"license": names[0].lower()}
    # the Hub's `license_name` is a slug: the licenses joined, each source's own in the card's Licenses section
    return {"license": "other", "license_name": "-and-".join(n.lower() for n in names) or "none"}


def size_category(rows: int) -> str:
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")):
        if rows < bound:
            return name
    return "100M<n<1B"


@dataclass
class Config:
    """One Hub config as written: its splits' Parquet files (relative to the repository), rows and bytes, and
    its features (the `datasets` YAML form of the Parquet schema every split shares)."""

    name: str
    features: list
    splits: dict[str, dict] = field(default_factory=dict)  # split -> {"files", "rows", "bytes"}


def _yaml_header(configs: list[Config], s: Sources, task_categories: list[str], pretty_name: str) -> str:
    import yaml

    rows = sum(sp["rows"] for c in configs for sp in c.splits.values())
    meta = {**hub_license(s), "pretty_name": pretty_name, "task_categories": task_categories,
            "tags": ["agents", "trajectories", "world-model", "trajforge"], "size_categories": [size_category(rows)],
            "configs": [{"config_name": c.name, **({"default": True} if i == 0 else {}),
                         "data_files": [{"split": split, "path": f"{c.name}/{split}-*.parquet"} for split in c.splits]}
                        for i, c in enumerate(configs)],
            "dataset_info": [{"config_name": c.name, "features": c.features,
                              "splits": [{"name": split, "num_bytes": sp["bytes"], "num_examples": sp["rows"]}
                                         for split, sp in c.splits.items()]} for c in configs]}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=120) + "---\n"


def _table(header: list[str], rows: list[list]) -> list[str]:
    cell = lambda v: str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows])


def _sources_section(s: Sources) -> list[str]:
    lines = ["## Sources", "", f"{s.episodes:,} episodes, by the format they were read from:", ""]
    lines += _table(["source format", "producer (version)", "reader", "episodes", "licenses"], [
        [f"`{fmt}`", "; ".join(f"{p} ({', '.join(sorted(v))})" for p, v in sorted(d["producers"].items())),
         ", ".join(sorted(d["readers"])), f"{d['episodes']:,}",
         ", ".join(f"{lic} {n:,}" for lic, n in sorted(d["licenses"].items()))] for fmt, d in s.formats.items()])
    lines += ["", "## Licenses", "", "Each episode keeps the license of its source: the one its data names, else "
              "the one stated beside its input (a PROVENANCE.md or LICENSE file), else one given when publishing"
              f" (`--license`; {s.overridden:,} episodes).", ""]
    lines += _table(["license", "episodes", "sources"],
                    [[lic, f"{d['episodes']:,}", f"{d['sources']:,}"] for lic, d in sorted(s.licenses.items())])
    if len(s.by_source) <= SOURCES_SHOWN:
        lines += ["", "Each source's license:", ""]
        lines += _table(["source", "license"], [[f"`{uri}`", lic] for uri, lic in s.by_source.items()])
    else:
        lines += ["", f"Each of the {len(s.by_source):,} sources' license is in `publish.json` (`by_source`)."]
    if s.unlicensed:
        lines += ["", f"**{len(s.unlicensed):,} sources state no license** (published with "
                  "`--allow-unlicensed`); their episodes may not be yours to redistribute:", ""]
        lines += [f"- `{uri}`" for uri in s.unlicensed[:SHOWN]]
        if len(s.unlicensed) > SHOWN:
            lines.append(f"- ... and {len(s.unlicensed) - SHOWN:,} more (all in `publish.json`)")
    return lines


def _counts_section(configs: list[Config], manifest: dict | None) -> list[str]:
    lines = ["## Counts", ""]
    lines += _table(["config", "split", "rows", "Parquet bytes"],
                    [[c.name, split, f"{sp['rows']:,}", f"{sp['bytes']:,}"] for c in configs
                     for split, sp in c.splits.items()])
    if manifest is None:
        return lines
    domains = sorted({d for split in manifest["counts"].values() for d in split})
    lines += ["", "Rows by split and domain:", ""]
    lines += _table(["split", *domains], [[split, *(f"{counts.get(d, 0):,}" for d in domains)]
                                          for split, counts in manifest["counts"].items()])
    skipped = {k: v for k, v in manifest.get("skipped", {}).items() if v}
    lines += ["", f"Transitions in: {manifest.get('transitions_in', 0):,}; tokens: {manifest.get('tokens_total', 0):,} "
              f"({manifest.get('tokenizer')}); left out: "
              + (", ".join(f"{k} {v:,}" for k, v in sorted(skipped.items())) or "none") + "."]
    return lines


def _recipe_section(manifest: dict | None) -> list[str]:
    if manifest is None:
        return ["## Recipe", "", "The dataset's real line as ingested, validated and deduplicated: configs "
                "`episodes` and `steps` hold the canonical tables (schema in trajforge's `schemas/README.md`)."]
    config = manifest["config"]
    lines = ["## Recipe", "", f"`pipelines export {manifest['kind']} {manifest['dataset']}@{manifest['version']} "
             f"--format {manifest['format']}` (export `{manifest['export_id']}`, schema {manifest['schema_version']})"
             ", with these options:", "", "```json", orjson.dumps(config, option=orjson.OPT_INDENT_2 |
                                                                  orjson.OPT_SORT_KEYS).decode(), "```"]
    recipe = manifest.get("recipe")
    if recipe:
        lines += ["", f"The `{recipe.get('name') or 'custom'}` data recipe, every decision counted:", "", "```json",
                  orjson.dumps(recipe, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode(), "```"]
    return lines


def card(configs: list[Config], s: Sources, manifest: dict | None, title: str, task_categories: list[str]) -> str:
    """The README.md: the Hub metadata header, then what a person reads before using the data."""
    lines = [f"# {title}", "", "Agent trajectories turned into training data by trajforge. Load it with "
             "`datasets.load_dataset(\"<this repository or folder>\")`"
             + (f" (configs: {', '.join(c.name for c in configs)})." if len(configs) > 1 else "."), ""]
    for section in (_sources_section(s), _recipe_section(manifest), _counts_section(configs, manifest)):
        lines += section + [""]
    return _yaml_header(configs, s, task_categories, title) + "\n" + "\n".join(lines)
