"""`pipelines publish SOURCE --out DIR`: an export's folder or a dataset laid out as a Hub dataset repository
(`pipelines.stages.publish`), uploaded with `huggingface_hub` when `--repo-id` and a token are given."""

from __future__ import annotations

import os
import sys


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("publish", help="lay an export (or a dataset) out as a Hugging Face dataset repository "
                       "with its dataset card; upload it with --repo-id", description=__doc__)
    p.add_argument("source", help="an export's folder (with its manifest.json), or a dataset NAME[@VERSION]")
    p.add_argument("--out", required=True, help="local folder for the repository's files")
    p.add_argument("--allow-unlicensed", action="store_true", help="publish even when some sources state no "
                   "license (the card names them)")
    p.add_argument("--license", action="append", metavar="GLOB=LICENSE", dest="license_rules",
                   help="the license of the episodes whose source URI matches GLOB and whose data and input named "
                        "none, e.g. 'runs/2026-*=CC-BY-4.0'; repeatable, the first match wins")
    p.add_argument("--repo-id", help="upload to this Hub dataset repository (user/name; made when missing)")
    p.add_argument("--token", help="Hub token for the upload (default: $HF_TOKEN)")
    p.add_argument("--private", action="store_true", help="make the repository private when it is created")
    p.add_argument("--endpoint", help="the Hub's address (default: $HF_ENDPOINT, else huggingface.co)")
    add_lake_args(p)


def cmd_publish(args) -> int:
    from pipelines.infra.lake import Lake, lake_url
    from pipelines.stages.publish import PublishError, parse_license_rules, publish, upload

    token = args.token or os.environ.get("HF_TOKEN")
    if args.repo_id and not token:
        print("publish: --repo-id needs a token (--token or $HF_TOKEN)", file=sys.stderr)
        return 2
    try:
        done = publish(Lake(lake_url(args.lake)), args.catalog, args.source, args.out,
                       allow_unlicensed=args.allow_unlicensed, license_rules=parse_license_rules(args.license_rules),
                       log=lambda line: print(line, file=sys.stderr, flush=True))
    except PublishError as e:
        print(f"publish: {e}", file=sys.stderr)
        return 2
    s = done.sources
    licenses = ", ".join(f"{k} {v['episodes']:,}" for k, v in sorted(s.licenses.items())) or "none"
    if s.unlicensed:
        licenses += f", none stated {len(s.unlicensed):,} source(s)"
    print(f"publish {args.source}: {done.rows:,} rows in {len(done.configs)} config(s) "
          f"({', '.join(c.name for c in done.configs)}) from {s.episodes:,} episodes of {len(s.formats)} source "
          f"format(s); licenses {licenses}")
    print(f"  out        {args.out} (README.md, publish.json)")
    if args.repo_id:
        url = upload(args.out, args.repo_id, token, private=args.private, endpoint=args.endpoint)
        print(f"  uploaded   {url}")
    return 0
