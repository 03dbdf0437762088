"""Joining Ray, the same way for every stage that runs tasks on it (through `pipelines.infra.executor`).

- no address: a local Ray started for this run, listening on loopback only;
- an address (`host:port` of a `ray start --head` node): the job joins that cluster and ships this
  project's packages with it (`runtime_env.py_modules`), since the cluster's nodes need not have it installed.
Clusters with token authentication (`RAY_AUTH_MODE=token` on every node) are joined the way Ray documents it:
the same `RAY_AUTH_MODE=token` and the token in `RAY_AUTH_TOKEN` (or `RAY_AUTH_TOKEN_PATH`, or the default
token file `ray get-auth-token` writes) in the environment of the process that runs the command.
"""

from __future__ import annotations

import functools
import os
import secrets
import sys
from pathlib import Path

DEFAULT_TOKEN_FILE = Path.home() / ".ray" / "auth_token"  # where `ray get-auth-token --generate` writes it


def init_ray(address: str | None) -> bool:
    """Make sure this process is connected to Ray; True when this call connected it (the caller then
    disconnects with `ray.shutdown()` when done)."""
    import ray

    if ray.is_initialized():
        return False
    options = dict(include_dashboard=False, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    if address:
        import catalog
        import ingest
        import pipelines
        import schemas
        import transforms

        options["runtime_env"] = {"py_modules": [catalog, ingest, pipelines, schemas, transforms]}
    else:
        options["_node_ip_address"] = "127.0.0.1"
    ray.init(address=address, **options)
    return True


def ask_for_token_auth(environ=os.environ) -> None:
    """Set `RAY_AUTH_MODE=token` in `environ` unless it says a mode already, before a local Ray is started.
    Ray turns token authentication on by itself when it finds its default token file, and then prints a notice
    on every start; asking for it says it is wanted. With no token at hand (`RAY_AUTH_TOKEN`,
    `RAY_AUTH_TOKEN_PATH` or the default file), a fresh one is set: the local Ray and this driver share it."""
    if environ.get("RAY_AUTH_MODE"):
        return
    environ["RAY_AUTH_MODE"] = "token"
    if not (environ.get("RAY_AUTH_TOKEN") or environ.get("RAY_AUTH_TOKEN_PATH") or DEFAULT_TOKEN_FILE.is_file()):
        environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)


class _RefusePandas:
    """An import finder that refuses pandas, while pyarrow looks for it (`prepare_worker`)."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas":
            raise ImportError("pandas is not loaded for pyarrow's type probe in a Ray worker")
        return None


@functools.cache
def prepare_worker() -> None:
    """Once per Ray worker process, before its first task: pyarrow's first array built from Python values
    looks for pandas (to tell a pandas Series from a list) and imports it, ~0.14 s of CPU and 36 MB of memory
    a worker (bench/ray_profile.py counted it in every worker's warm-up: on 2 workers of a 2-core machine, the
    largest fixed part of an ingest). No task hands pyarrow a pandas object, so the probe is answered "no
    pandas": what asks pyarrow for pandas itself later (`Table.to_pandas`, `Table.from_pandas`) still imports
    it then, as pyarrow retries the import for those."""
    if "pandas" in sys.modules:  # loaded already: pyarrow finds it at no cost
        return
    import pyarrow as pa

    finder = _RefusePandas()
    sys.meta_path.insert(0, finder)
    try:
        pa.array([])  # the probe, answered once for the process
    finally:
        sys.meta_path.remove(finder)
