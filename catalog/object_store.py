"""Lakes on an object store (`s3://bucket/lake`, `gs://...`, ...): their settings, and how the catalog's DuckDB
connection reads their parts.

Settings are the object store's own, read where its clients read them, so one environment serves the lake's
fsspec filesystem (s3fs/botocore), the catalog's DuckDB connection and any other S3 tool:

    AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN   credentials
    AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL)                    an S3-compatible server (MinIO, moto, R2...)
    AWS_REGION (or AWS_DEFAULT_REGION)                           the region

fsspec's own configuration (`FSSPEC_S3_KEY`, `FSSPEC_S3_ENDPOINT_URL`, ... or `~/.config/fsspec/*.json`) comes
first when set, as it does for s3fs.

DuckDB reads `s3://` parts with its httpfs extension, loaded from what is on the machine: the build the
`duckdb-extension-httpfs` package ships for the pinned DuckDB (a dependency), or one installed with `INSTALL
httpfs`; its S3 secret is made
from the settings above and lives only in the connection (never written to the catalog file). Without httpfs
the lake's fsspec filesystem is registered on the connection (`register_filesystem`) and DuckDB reads the parts
through it: the same views and queries, served by Python instead of DuckDB's own client. A plain `duckdb`
CLI opening the catalog has neither and needs httpfs to query views over an object store.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import fsspec

# Stores without a rename: a "move" is a copy and a delete, and an object is whole or absent. Writes into them
# are one upload each (pipelines.infra.lake.Lake.write_bytes_atomic).
OBJECT_STORES = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"})
HTTPFS_S3 = frozenset({"s3", "s3a"})  # what this module configures httpfs for


def protocol(url: str) -> str | None:
    """The URL's scheme ("s3"), or None for a local path."""
    return url.split("://", 1)[0].lower() if "://" in url else None


def is_object_store(url: str) -> bool:
    return protocol(url) in OBJECT_STORES


def s3_settings(env: dict | None = None) -> dict:
    """endpoint_url, key, secret, token, region for S3 as s3fs would use them (None where not set)."""
    env = os.environ if env is None else env
    conf = fsspec.config.conf.get("s3", {})
    client = conf.get("client_kwargs") or {}
    return {
        "endpoint_url": (conf.get("endpoint_url") or client.get("endpoint_url") or env.get("AWS_ENDPOINT_URL_S3")
                         or env.get("AWS_ENDPOINT_URL")),
        "key": conf.get("key") or env.get("AWS_ACCESS_KEY_ID"),
        "secret": conf.get("secret") or env.get("AWS_SECRET_ACCESS_KEY"),
        "token": conf.get("token") or env.get("AWS_SESSION_TOKEN"),
        "region": client.get("region_name") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
    }


def s3_secret_sql(settings: dict, scope: str | None = None, name: str = "trajforge_lake") -> str:
    """DuckDB's `CREATE SECRET` (httpfs, TYPE s3) for these settings: a temporary secret, path-style URLs and
    SSL as the endpoint's scheme says when an endpoint is given (S3-compatible servers), AWS's defaults
    otherwise; no KEY_ID without credentials (anonymous reads)."""
    def q(value: str) -> str:
        return "'" + str(value).replace("'", "''") + "'"

    fields = ["TYPE s3"]
    if settings.get("key"):
        fields += [f"KEY_ID {q(settings['key'])}", f"SECRET {q(settings.get('secret') or '')}"]
        if settings.get("token"):
            fields.append(f"SESSION_TOKEN {q(settings['token'])}")
    if settings.get("region"):
        fields.append(f"REGION {q(settings['region'])}")
    if settings.get("endpoint_url"):
        url = urlsplit(settings["endpoint_url"] if "://" in settings["endpoint_url"]
                       else "https://" + settings["endpoint_url"])
        fields += [f"ENDPOINT {q(url.netloc)}", "URL_STYLE 'path'",
                   f"USE_SSL {'false' if url.scheme == 'http' else 'true'}"]
    if scope:
        fields.append(f"SCOPE {q(scope)}")
    return f"CREATE OR REPLACE TEMPORARY SECRET {name} ({', '.join(fields)})"


def _bucket_scope(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def httpfs_file() -> str | None:
    """The httpfs build that the `duckdb-extension-httpfs` package ships for this DuckDB version, if any."""
    import pathlib

    import duckdb

    try:
        import duckdb_extension_httpfs
    except ImportError:
        return None
    path = (pathlib.Path(duckdb_extension_httpfs.__file__).parent / "extensions" / f"v{duckdb.__version__}"
            / "httpfs.duckdb_extension")
    return str(path) if path.exists() else None


def load_httpfs(con) -> bool:
    """Load httpfs into `con` from what is on this machine (never downloads it: no network needed): the
    extension installed for this DuckDB, or the build the `duckdb-extension-httpfs` package ships. False when
    neither loads (none for this DuckDB version, or broken)."""
    rows = con.execute("SELECT loaded, installed FROM duckdb_extensions() WHERE extension_name = 'httpfs'").fetchall()
    if rows and rows[0][0]:
        return True
    for statement in (["LOAD httpfs"] if rows and rows[0][1] else []) + (
            [f"LOAD '{path}'" for path in [httpfs_file()] if path]):
        try:
            con.execute(statement)
            return True
        except Exception:  # built for another DuckDB, or broken: try the next, else read through fsspec
            continue
    return False


def attach(con, lake_root: str) -> str | None:
    """Make `con` read parts under `lake_root`. Returns how: "httpfs", "fsspec", or None for a local lake
    (nothing to do). Never downloads httpfs (left alone, DuckDB would try on the first `s3://` path it met,
    and fail offline): without it a filesystem registered for the protocol takes those paths instead."""
    scheme = protocol(lake_root)
    if scheme is None or scheme == "file":
        return None
    if scheme in HTTPFS_S3 and load_httpfs(con):
        con.execute(s3_secret_sql(s3_settings(), _bucket_scope(lake_root)))
        return "httpfs"
    fs = fsspec.filesystem(scheme)
    con.register_filesystem(fs)
    return "fsspec"
