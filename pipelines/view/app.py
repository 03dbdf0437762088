"""The web app: routes, the data each page needs, and the responses. Starlette runs these sync handlers in
its thread pool; each opens the catalog read-only for the length of one request."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from urllib.parse import quote, urlencode

import jinja2
import orjson
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pipelines.view import charts, files, marks, queries
from pipelines.view.db import CatalogBusy, Source, tables

HERE = Path(__file__).parent
DATASETS_PER_PAGE, RUNS_PER_PAGE, VERSIONS_PER_PAGE = 100, 20, 10
EPISODES_PER_PAGE, STEPS_PER_PAGE, QUARANTINE_PER_PAGE, CLUSTERS_PER_PAGE = 50, 20, 50, 20
EVALS_PER_PAGE, EVAL_SAMPLES_PER_PAGE = 50, 10
MAX_PAGE = 1_000_000
# No script runs on these pages: trace content that escaped escaping still could not execute.
PAGE_HEADERS = {
    "content-security-policy": "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
# GX Data Docs are our own HTML but quote trace values: scripts only in a sandbox with an opaque origin.
REPORT_CSP = "sandbox allow-scripts; default-src 'self' 'unsafe-inline' data:; frame-ancestors 'none'"
BLOB_CSP = "default-src 'none'; sandbox"
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


# templates ------------------------------------------------------------------------------------------------
def _num(value) -> str:
    if value is None:
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _seconds(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    if value < 60:
        return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"
    minutes, s = divmod(int(round(value)), 60)
    return f"{minutes} min {s} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def _when(value) -> str:
    """A timestamp in UTC (DuckDB hands them out in the session's local zone), to the millisecond if any."""
    if value is None:
        return "–"
    if not isinstance(value, dt.datetime):
        return str(value)
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc)
    spec = "milliseconds" if value.microsecond else "seconds"
    return value.replace(tzinfo=None).isoformat(sep=" ", timespec=spec) + " UTC"


def _pretty(value) -> str:
    """A JSON string indented when it parses; anything else as text."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            return orjson.dumps(orjson.loads(value), option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONDecodeError:
            return value
    return orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode()


def _action_fields(action: dict | None) -> list[tuple[str, object]]:
    skip = {"raw"}
    return [(k, v) for k, v in (action or {}).items() if v is not None and k not in skip]


def _action_summary(action: dict | None) -> str:
    """One line for an action: its kind and its main argument."""
    if not action:
        return "no action"
    kind = action.get("kind") or "?"
    for key in ("text", "code", "tool_name", "keys", "direction"):
        if action.get(key):
            value = str(action[key])
            return f"{kind} {value[:120]}{'…' if len(value) > 120 else ''}"
    if action.get("x") is not None and action.get("y") is not None:
        return f"{kind} at ({action['x']:.3f}, {action['y']:.3f})"
    return kind


def _delta(value, parent) -> str:
    if value is None or parent is None or value == parent:
        return ""
    return f"{value - parent:+,}"


# what a stage's `quarantined` count (stage_stats) holds: rows set aside with a reason for the data stages; for
# the model-calling stages, samples or requests that failed (nothing of the dataset is quarantined)
DROPPED_WORD = {"eval": "failed", "label": "failed or not kept"}


def _dropped_word(stage: str) -> str:
    return DROPPED_WORD.get(stage, "quarantined")


def _templates() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=_num, seconds=_seconds, when=_when, pretty=_pretty, action_fields=_action_fields,
                       action_summary=_action_summary, delta=_delta, dropped_word=_dropped_word,
                       path=lambda s: quote(str(s), safe=""))
    env.globals.update(qs=lambda params, **changes: "?" + urlencode(
        {k: v for k, v in {**params, **changes}.items() if v not in (None, "")}))
    return env


def _pager(page: int, per_page: int, total: int) -> dict:
    pages = max(math.ceil(total / per_page), 1)
    return {"page": page, "pages": pages, "total": total, "prev": page - 1 if page > 1 else None,
            "next": page + 1 if page < pages else None, "first": (page - 1) * per_page + 1 if total else 0,
            "last": min(page * per_page, total)}


def _page_number(request: Request, name: str = "page") -> int:
    try:
        return min(max(int(request.query_params.get(name, "1")), 1), MAX_PAGE)
    except ValueError:
        return 1


# pages ----------------------------------------------------------------------------------------------------
class View:
    def __init__(self, source: Source):
        self.source = source
        self.env = _templates()

    def render(self, template: str, request: Request, status: int = 200, **context) -> HTMLResponse:
        html = self.env.get_template(template).render(request=request, lake=self.source.lake.url, **context)
        return HTMLResponse(html, status_code=status)

    def not_found(self, request: Request, what: str) -> HTMLResponse:
        return self.render("error.html", request, 404, title="Not found", message=what)

    def datasets(self, request: Request) -> Response:
        page = _page_number(request)
        with self.source.connect() as con:
            found = queries.datasets_list(con, DATASETS_PER_PAGE, 0)
            runs, total = queries.runs_page(con, "", RUNS_PER_PAGE, (page - 1) * RUNS_PER_PAGE)
            stats = queries.stage_stats(con, [r["run_id"] for r in runs])
        return self.render("datasets.html", request, datasets=found, runs=runs, stats=stats,
                           pages=_pager(page, RUNS_PER_PAGE, total), params={})

    def dataset(self, request: Request) -> Response:
        name = request.path_params["name"]
        page, runs_page = _page_number(request), _page_number(request, "runs")
        with self.source.connect() as con:
            if not queries.dataset_exists(con, name):
                return self.not_found(request, f"no dataset {name!r} in this catalog")
            versions, total = queries.versions_page(con, name, VERSIONS_PER_PAGE, (page - 1) * VERSIONS_PER_PAGE)
            by_rule = queries.quarantine_by_version(con, self.source.root, versions)
            runs, runs_total = queries.runs_page(con, name, RUNS_PER_PAGE, (runs_page - 1) * RUNS_PER_PAGE)
            stats = queries.stage_stats(con, sorted({v["run_id"] for v in versions} | {r["run_id"] for r in runs}))
        reports = {v["version"]: files.report_file(self.source.lake, name, v["version"], "index.html")
                   for v in versions if files.report_exists(self.source.lake, name, v["version"])}
        chart = charts.stacked("quarantined records by rule, per version",
                               [(f"v{v['version']}", by_rule.get(v["version"], {})) for v in versions])
        return self.render("dataset.html", request, name=name, versions=versions, stats=stats, runs=runs,
                           reports=reports, chart=chart,
                           pages=_pager(page, VERSIONS_PER_PAGE, total),
                           runs_pages=_pager(runs_page, RUNS_PER_PAGE, runs_total),
                           params={"page": page, "runs": runs_page})

    def episodes(self, request: Request) -> Response:
        f = queries.EpisodeFilter.from_query(request.query_params)
        page = _page_number(request)
        with self.source.connect() as con:
            have = tables(con)
            facets = queries.episode_facets(con)
            found = queries.episodes_page(con, f, have, EPISODES_PER_PAGE, (page - 1) * EPISODES_PER_PAGE)
            summary = queries.episodes_summary(con, f, have)
        choices = {k: sorted({r[k] for r in facets if r[k] is not None})
                   for k in ("dataset", "domain", "platform", "source_format", "outcome")}
        return self.render("episodes.html", request, f=f, params=f.as_params(), choices=choices, episodes=found,
                           pages=_pager(page, EPISODES_PER_PAGE, summary["total"]),
                           steps_chart=charts.steps_histogram(summary["buckets"]),
                           domain_chart=charts.bars("episodes by domain",
                                                    [(d["domain"] or "?", d["n"]) for d in summary["domains"]]))

    def episode(self, request: Request) -> Response:
        dataset, episode_id = request.path_params["dataset"], request.path_params["episode_id"]
        page = _page_number(request)
        first = (page - 1) * STEPS_PER_PAGE
        with self.source.connect() as con:
            have = tables(con)
            ep = queries.episode(con, dataset, episode_id)
            if ep is None:
                return self.not_found(request, f"no episode {episode_id!r} in dataset {dataset!r}")
            got = queries.steps_range(con, dataset, episode_id, first, first + STEPS_PER_PAGE)
            shown = got[:STEPS_PER_PAGE]
            ids = [s["step_id"] for s in shown]
            branches = queries.branches_of(con, dataset, ids) if "branches" in have else []
            exports = queries.export_rows_of(con, dataset, ids, have)
        steps = [_step_view(s, got[i + 1] if i + 1 < len(got) else None, branches, exports)
                 for i, s in enumerate(shown)]
        return self.render("episode.html", request, ep=ep, env=_pretty(ep.get("env")), steps=steps,
                           pages=_pager(page, STEPS_PER_PAGE, max(ep.get("num_steps") or 0, len(shown))),
                           params={})

    def quarantine(self, request: Request) -> Response:
        f = queries.QuarantineFilter.from_query(request.query_params)
        page = _page_number(request)
        with self.source.connect() as con:
            groups = queries.quarantine_groups(con, f.dataset)
            found = queries.quarantine_page(con, f, QUARANTINE_PER_PAGE, (page - 1) * QUARANTINE_PER_PAGE)
        total = sum(g["n"] for g in groups if (not f.stage or g["stage"] == f.stage)
                    and (not f.rule or g["rule"] == f.rule))
        by_rule: dict[str, int] = {}
        for g in groups:
            by_rule[f"{g['stage']} / {g['rule']}"] = by_rule.get(f"{g['stage']} / {g['rule']}", 0) + g["n"]
        chart = charts.bars("quarantined records by stage / rule", sorted(by_rule.items(), key=lambda kv: -kv[1]))
        return self.render("quarantine.html", request, f=f, params=f.as_params(), groups=groups, records=found,
                           chart=chart, pages=_pager(page, QUARANTINE_PER_PAGE, total))

    def duplicates(self, request: Request) -> Response:
        dataset = (request.query_params.get("dataset") or "").strip()[:500]
        page = _page_number(request)
        clusters: list[dict] = []
        total = 0
        with self.source.connect() as con:
            if "dedup_clusters" in tables(con):
                members, total = queries.clusters_page(con, dataset, CLUSTERS_PER_PAGE,
                                                       (page - 1) * CLUSTERS_PER_PAGE)
                details: dict[tuple[str, str], dict] = {}
                for ds, run_id in sorted({(m["dataset"], m["run_id"]) for m in members}):
                    mine = [m for m in members if (m["dataset"], m["run_id"]) == (ds, run_id)]
                    ids = sorted({m["episode_id"] for m in mine} | {m["representative"] for m in mine})
                    parts = queries.dedup_input_parts(con, ds, run_id)
                    details[(ds, run_id)] = queries.cluster_members(con, self.source.root, parts, ids)
                clusters = _group_clusters(members, details)
        return self.render("duplicates.html", request, clusters=clusters, dataset=dataset,
                           params={"dataset": dataset}, pages=_pager(page, CLUSTERS_PER_PAGE, total))

    def evals(self, request: Request) -> Response:
        page = _page_number(request)
        with self.source.connect() as con:
            found, total = queries.evals_page(con, EVALS_PER_PAGE, (page - 1) * EVALS_PER_PAGE) \
                if "evals" in tables(con) else ([], 0)
        return self.render("evals.html", request, evals=found, pages=_pager(page, EVALS_PER_PAGE, total), params={})

    def eval(self, request: Request) -> Response:
        eval_id = request.path_params["eval_id"]
        domain = (request.query_params.get("domain") or "").strip()[:100]
        page = _page_number(request)
        with self.source.connect() as con:
            header = queries.eval_header(con, eval_id) if "evals" in tables(con) else None
            if header is None:
                return self.not_found(request, f"no evaluation {eval_id!r} in this catalog")
            cells = queries.eval_table(con, eval_id)
            worst, total = queries.eval_worst(con, eval_id, domain, EVAL_SAMPLES_PER_PAGE,
                                              (page - 1) * EVAL_SAMPLES_PER_PAGE)
        return self.render("eval.html", request, ev=header, table=_eval_rows(cells), samples=worst, domain=domain,
                           dimensions=EVAL_DIMENSIONS, params={"domain": domain},
                           pages=_pager(page, EVAL_SAMPLES_PER_PAGE, total))

    def blob(self, request: Request) -> Response:
        sha = files.parse_ref(request.path_params["ref"])
        if sha is None:
            return PlainTextResponse("not a blob reference: expected sha256:<64 hex digits>", 400)
        with self.source.connect() as con:
            row = queries.blob(con, sha)
        if row is None or not files.safe_blob_uri(row["uri"]):
            return PlainTextResponse("no such blob", 404)
        if (row["size_bytes"] or 0) > files.MAX_BLOB_BYTES:
            return PlainTextResponse("blob too large to show", 413)
        data = files.read_blob(self.source.lake, row["uri"], sha)
        if data is None:
            return PlainTextResponse("blob missing from the lake, or its content does not match its hash", 404)
        media_type, inline = files.served_type(row["media_type"])
        headers = {"content-security-policy": BLOB_CSP, "cache-control": "private, max-age=31536000, immutable"}
        if not inline:
            headers["content-disposition"] = f'attachment; filename="{sha}"'
        return Response(data, media_type=media_type, headers=headers)

    def report(self, request: Request) -> Response:
        dataset, version = request.path_params["dataset"], request.path_params["version"]
        with self.source.connect() as con:
            known = queries.dataset_exists(con, dataset)
        path = files.report_file(self.source.lake, dataset, version, request.path_params.get("path", ""))
        found = files.read_report(self.source.lake, path) if known and path else None
        if found is None:
            return PlainTextResponse("no such report file", 404)
        data, media_type = found
        return Response(data, media_type=media_type, headers={"content-security-policy": REPORT_CSP})


def _step_view(step: dict, after: dict | None, branches: list[dict], exports: list[dict]) -> dict:
    """A step with what the page draws beside it: its screen, the real next state, its branches."""
    nxt = after["observation"] if after else step.get("final_observation")
    mine = [b for b in branches if b["parent_step_id"] == step["step_id"]]
    return {**step, "screen": marks.screen(step["observation"], step["action"]),
            "next_observation": nxt, "next_is_final": after is None and nxt is not None,
            "next_screen": marks.screen(nxt, None),
            "branches": [{**b, "screen": marks.screen(step["observation"], b["action"]),
                          "next_screen": marks.screen(b["next_observation"], None)} for b in mine],
            "exports": [e for e in exports if e["step_id"] == step["step_id"]]}


EVAL_DIMENSIONS = ("format", "factuality", "consistency", "realism", "quality", "total_score")


def _eval_rows(cells: list[dict]) -> list[dict]:
    """eval_scores cells to one row per domain: counts and a score per dimension."""
    out: dict[str, dict] = {}
    for c in cells:
        row = out.setdefault(c["domain"], {"domain": c["domain"], "samples": c["samples"], "valid": c["valid"],
                                           "failed": c["failed"], "scores": {}})
        row["scores"][c["dimension"]] = c["score"]
    return list(out.values())


def _group_clusters(members: list[dict], details: dict) -> list[dict]:
    clusters: dict[tuple, dict] = {}
    for m in members:
        key = (m["dataset"], m["run_id"], m["cluster_id"])
        info = details.get((m["dataset"], m["run_id"]), {})
        c = clusters.setdefault(key, {"dataset": m["dataset"], "run_id": m["run_id"], "cluster_id": m["cluster_id"],
                                      "kind": m["kind"], "size": m["members"], "representative": m["representative"],
                                      "members": []})
        c["members"].append({**m, "info": info.get(m["episode_id"]),
                             "is_representative": m["episode_id"] == m["representative"]})
    return list(clusters.values())


# the app --------------------------------------------------------------------------------------------------
class _Headers:
    """Adds the page security headers to every response that does not set its own."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in PAGE_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(source: Source, allowed_hosts: list[str] | None = None) -> Starlette:
    """The app over `source`. `allowed_hosts`: Host header values answered (default: loopback names, so a
    web page that rebinds its domain to 127.0.0.1 cannot read the lake); ["*"] answers any."""
    view = View(source)

    def busy(request: Request, exc: CatalogBusy) -> Response:
        return view.render("busy.html", request, 503, title="Catalog busy", message=str(exc))

    routes = [
        Route("/", lambda request: RedirectResponse("/datasets")),
        Route("/datasets", view.datasets),
        Route("/datasets/{name}", view.dataset, name="dataset"),
        Route("/episodes", view.episodes),
        Route("/episodes/{dataset}/{episode_id}", view.episode, name="episode"),
        Route("/quarantine", view.quarantine),
        Route("/duplicates", view.duplicates),
        Route("/evals", view.evals),
        Route("/evals/{eval_id}", view.eval, name="eval"),
        Route("/blob/{ref}", view.blob, name="blob"),
        Route("/reports/{dataset}/v{version:int}/{path:path}", view.report, name="report"),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOOPBACK_HOSTS,
                             www_redirect=False), Middleware(_Headers)]
    return Starlette(routes=routes, middleware=middleware, exception_handlers={CatalogBusy: busy})
