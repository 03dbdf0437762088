"""Peak memory of a measured process, as the benchmarks report it.

getrusage's ru_maxrss is not enough for a process started by a benchmark: Linux keeps the larger of the
parent's resident set at fork and the child's own across fork + exec, so a stage run from a benchmark that
had grown (a limit measured in-process, say) reports the benchmark's size, not its own.
"""

from __future__ import annotations

import resource


def own_peak_mb() -> float:
    """This process's peak resident set in MB: VmHWM, which belongs to its own address space."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tree_peak_mb() -> float:
    """The larger of this process's peak and its largest finished child's (ru_maxrss of the children: a child
    forked from this process counts at least this process's size then, so the tree is never undercounted)."""
    return max(own_peak_mb(), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
