"""What a format module says about itself, in one place (`INFO = FormatInfo(...)` beside `FORMAT` and
`VERSION`): the registry, the pipelines' format lists, `pipelines formats` and the README's formats tables are
made from it, so adding a format touches its own module, sample, golden and test, and nothing else by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

# The ingest-<group> pipelines, in the order the README lists them; a format of group None is read by
# `ingest-all` only.
GROUPS = ("android", "ubuntu", "macos", "browser", "swe", "mcp")


@dataclass(frozen=True)
class FormatInfo:
    group: str | None  # the `ingest-<group>` pipeline (and dataset) that reads it; None: `ingest-all` only
    # claim order: a file goes to the lowest-ranked format that recognizes it. Specific signatures rank first, and
    # a folder format ranks before the formats of the files it holds (a Terminal-Bench trial before its asciicast)
    rank: int
    domains: tuple[str, ...]  # the domains its episodes get (the first is the default)
    platform: str  # the platform its episodes run on, or "varies"
    summary: str  # what it reads, for the README's pipelines table (one phrase, markdown)
    producer: str | None = None  # the program whose output the tests run or read, when a test runs it
    versions: str | None = None  # the producer versions the tests prove
    proof: str | None = None  # how the tests prove them (producer run, oracle, real files; markdown)

    def __post_init__(self):
        if self.group is not None and self.group not in GROUPS:
            raise ValueError(f"unknown format group {self.group!r} (known: {', '.join(GROUPS)})")
        if (self.producer is None) != (self.proof is None):
            raise ValueError("a format names its producer and how the tests prove it together, or neither")
