"""Deterministic train / validation / test splits, grouped so near-identical trajectories never straddle two.

Every trajectory has a *group*: its app (android `env.app_package`), repository (`env.repo`), site (`env.site`,
or the host of its first URL for web), MCP server (`env.server`), else its task text, else its own episode
id. Episodes that share a group, or share a dedup cluster (`dedup_clusters` rows: cluster_id, episode_id),
are joined into one component (union-find), and a whole component goes to the split that
xxh64(seed + the component's smallest group key) falls in. Adding unrelated data never moves a component.

Held-out ids (e.g. a benchmark's task ids) are matched against episode ids, tasks and group keys; matching
trajectories are left out of every split.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import xxhash

SPLITS = ("train", "validation", "test")
DEFAULT_RATIOS = (0.90, 0.05, 0.05)
_GROUP_ENV_KEYS = ("app_package", "repo", "site", "server")


def group_key(domain: str, task: str | None, env: dict, first_url: str | None, episode_id: str) -> str:
    for key in _GROUP_ENV_KEYS:
        value = env.get(key)
        if isinstance(value, str) and value:
            return f"{domain}:{key}={value}"
    if domain == "web" and first_url:
        host = urlsplit(first_url).hostname
        if host:
            return f"{domain}:site={host}"
    if task:
        return f"{domain}:task={' '.join(task.split()).lower()}"
    return f"{domain}:episode={episode_id}"


class _UnionFind:
    def __init__(self):
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the smaller key becomes the root, so a component's root is its smallest member
            self.parent[max(ra, rb)] = min(ra, rb)


def _bucket(key: str, seed: str, ratios: tuple[float, float, float]) -> str:
    u = xxhash.xxh64_intdigest(f"{seed}\x00{key}".encode()) / 2**64
    if u < ratios[0]:
        return SPLITS[0]
    return SPLITS[1] if u < ratios[0] + ratios[1] else SPLITS[2]


def assign(groups: dict[str, str], clusters: list[tuple[str, str]] = (), *, seed: str = "",
           ratios: tuple[float, float, float] = DEFAULT_RATIOS) -> dict[str, str]:
    """episode_id -> split. `groups`: episode_id -> group key; `clusters`: (cluster_id, episode_id) pairs."""
    uf = _UnionFind()
    for episode_id, group in groups.items():
        uf.union(f"g:{group}", f"e:{episode_id}")
    for cluster_id, episode_id in clusters:
        if episode_id in groups:
            uf.union(f"e:{episode_id}", f"c:{cluster_id}")
    # name a component by its smallest *group* key, so cluster ids (which dedup reruns may renumber) do not
    # decide the split on their own
    smallest: dict[str, str] = {}
    for episode_id, group in groups.items():
        root = uf.find(f"e:{episode_id}")
        if root not in smallest or group < smallest[root]:
            smallest[root] = group
    return {e: _bucket(smallest[uf.find(f"e:{e}")], seed, ratios) for e in groups}


def is_held_out(held_out: set[str], episode_id: str, task: str | None, group: str) -> bool:
    return bool(held_out) and (episode_id in held_out or (task is not None and task in held_out)
                               or group in held_out or group.split("=", 1)[-1] in held_out)
