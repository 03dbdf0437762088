"""Peak memory of every command as the dataset doubles: a stage whose memory follows its part size stays flat.

    .venv/bin/python bench/memory.py [--mb 200] [--task-mb 32]

Builds synthetic DroidBot corpora (bench/android_corpus.py) of MB, 2 x MB and 4 x MB, ingests each into its own
lake with a fixed task size, then runs each later command on it in a fresh process and prints that process's
peak RSS (VmHWM, `bench/peak.py`), one row per command, with the ratio of the largest dataset's peak to the smallest's
(1.0: flat; 4.0: grows with the data). The exports run with `--shard-mb 8` (a Parquet shard, cpt text, sft trl
or rl verl, is written in row groups of 8 MB of records as it fills, so its size no longer sets the peak: with
the default 256 MB the peak stays flat too).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.android_corpus import write_corpus  # noqa: E402

COMMANDS = {
    "ingest": ["run", "ingest-android", "--input", "{corpus}", "--task-mb", "{task_mb}", "-q"],
    # an explicit contract (the default's value) makes a verdict digest of its own: every group the ingest
    # run's validate found clean is checked again, so this measures the rules' work, not the memo
    "validate": ["validate", "android", "--no-gx", "--contract", "default=evolve"],
    "dedup": ["dedup", "android"],
    "label (plan)": ["label", "android", "--model", "m", "--dry-run", "--branch-points", "every"],
    "export cpt": ["export", "cpt", "android", "--out", "{out}/cpt", "--shard-mb", "8"],
    "export sft": ["export", "sft", "android", "--out", "{out}/sft", "--shard-mb", "8"],
    "export rl": ["export", "rl", "android", "--out", "{out}/rl", "--shard-mb", "8"],
    "export atif": ["export", "atif", "android", "--out", "{out}/atif"],
}


def peak_mb(argv: list[str], lake: Path) -> float:
    """Run `pipelines ARGV --lake LAKE` in a fresh interpreter; its peak RSS in MB."""
    code = ("import sys; from pipelines import cli; from bench.peak import own_peak_mb; "
            "sys.stdout = open('/dev/null', 'w'); code = cli.main(%r); "
            "sys.stderr.write('PEAK %%f\\n' %% own_peak_mb()); "
            "sys.exit(code)") % ([*argv, "--lake", str(lake)],)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    line = next(ln for ln in done.stderr.splitlines() if ln.startswith("PEAK "))
    return float(line.split()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200, help="smallest dataset, MB of input (then x2, x4)")
    ap.add_argument("--task-mb", type=float, default=32, help="input MB per ingest task (the part size)")
    args = ap.parse_args()
    sizes = [args.mb, 2 * args.mb, 4 * args.mb]
    table: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            corpus, lake, out = Path(tmp, f"in-{size:g}"), Path(tmp, f"lake-{size:g}"), Path(tmp, f"out-{size:g}")
            write_corpus(corpus, size)
            for name, argv in COMMANDS.items():
                argv = [a.format(corpus=corpus, out=out, task_mb=args.task_mb) for a in argv]
                table[name].append(peak_mb(argv, lake))
                print(f"  {size:g} MB  {name:14s} {table[name][-1]:8.0f} MB", file=sys.stderr, flush=True)
    print(f"peak RSS (MB) by input size, ingest tasks of {args.task_mb:g} MB")
    print(f"{'command':16s}" + "".join(f"{s:>10g} MB" for s in sizes) + "   largest/smallest")
    for name, peaks in table.items():
        print(f"{name:16s}" + "".join(f"{p:13.0f}" for p in peaks) + f"   {peaks[-1] / peaks[0]:.2f}x")


if __name__ == "__main__":
    main()
