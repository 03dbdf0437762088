"""`pipelines view`: browse a lake in a local web app (read-only on the catalog). Kept apart from
`pipelines.view` so the command line starts without importing the web stack."""

from __future__ import annotations

import argparse
import os
import socket
import sys

DEFAULT_PORT = 8765


def add_parser(sub, add_lake_args) -> None:
    p = sub.add_parser("view", help="browse datasets, episodes step by step, quarantine and duplicates in a "
                       "local web app (read-only)")
    add_lake_args(p)
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only; anything else exposes the lake "
                        "to the network)")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ValueError(f"cannot listen on {host}:{port}: {e.strerror} (--port 0 picks a free port)") from e
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def cmd_view(args: argparse.Namespace) -> int:
    import uvicorn

    from pipelines.infra.lake import Lake, lake_url
    from pipelines.infra.runs import catalog_path
    from pipelines.view.app import create_app
    from pipelines.view.db import Source

    lake = Lake(lake_url(args.lake))
    path = catalog_path(lake, args.catalog)
    if not os.path.exists(path):
        raise ValueError(f"no catalog at {path}: run a pipeline into this lake first")
    sock = _bind(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    app = create_app(Source(lake, path), allowed_hosts=None if _loopback(args.host) else ["*"])
    print(f"pipelines view: http://{shown}:{port}/   lake {lake.url} (read-only; Ctrl-C stops)", flush=True)
    if not _loopback(args.host):
        print(f"WARNING: listening on {args.host}: anyone who reaches this address can read the lake",
              file=sys.stderr, flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    server.run(sockets=[sock])
    return 0
