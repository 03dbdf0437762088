"""Fuzz the readers: malformed variants of the bundled samples, each ingested in a child process under
RLIMIT_AS and a timeout, checked for hangs, memory, failed tasks and silent losses (tests/fuzz).

    .venv/bin/python bench/fuzz.py                # the quick subset (what CI runs)
    .venv/bin/python bench/fuzz.py --full         # every variant
    .venv/bin/python bench/fuzz.py --full --only browsergym --verbose
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz.harness import MEMORY_LIMIT, TIMEOUT_S, run_variants, summary  # noqa: E402
from tests.fuzz.variants import variants  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="every variant, not only the quick subset")
    parser.add_argument("--only", help="variants whose name contains this text")
    parser.add_argument("--jobs", type=int, default=2, help="children at once (default 2)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S, help="seconds per variant")
    parser.add_argument("--memory-gib", type=float, default=MEMORY_LIMIT / (1 << 30), help="RLIMIT_AS per child")
    parser.add_argument("--verbose", action="store_true", help="one line per variant")
    args = parser.parse_args()

    chosen = [v for v in variants(args.full) if not args.only or args.only in v.name]
    started = time.perf_counter()
    results = run_variants(chosen, jobs=args.jobs, timeout=args.timeout, memory_limit=int(args.memory_gib * (1 << 30)))
    if args.verbose:
        for r in results:
            o = r.outcome
            rows = ", ".join(sorted({f"{row['rule']}" for row in o.rows}))
            print(f"{o.status:6s} steps {o.steps:3d}/{r.baseline.steps:<3d} rows {len(o.rows):2d} "
                  f"rss {o.rss_mb:5.0f} MB {o.seconds:5.1f} s  {r.variant.name}  [{rows}]"
                  f"{'  UNCLAIMED' if r.unclaimed else ''}"
                  f"{'  ' + ','.join(r.problems) if r.problems else ''}")
    print(summary(results))
    by_class = Counter(r.variant.cls for r in results)
    print("classes: " + ", ".join(f"{c} {n}" for c, n in sorted(by_class.items())))
    print(f"{len(results)} variants in {time.perf_counter() - started:.1f} s")
    return 1 if any(r.problems for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
