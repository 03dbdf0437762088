"""A progress line every few seconds while model requests are out (`label`, `label --mode sample`, `eval`, and
the judge of both): done /
total, failed, rate and ETA; while none has come back yet, how long it has waited and on how many in flight,
so a slow server (a CPU model answering with a large `max_tokens`) is never silence.

    with RequestProgress("label", len(todo), log) as progress:
        complete(config, requests, lambda c: (on_result(c), progress.done(c.error is None)))
"""

from __future__ import annotations

import threading
import time
from typing import Callable

EVERY_S = 5.0


class RequestProgress:
    def __init__(self, what: str, total: int, log: Callable[[str], None], every_s: float | None = None,
                 waiting_on: str = ""):
        self.what, self.total, self.log, self.waiting_on = what, total, log, waiting_on
        self.every_s = EVERY_S if every_s is None else every_s  # the module's value when called (tests shorten it)
        self.answered = self.failed = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def done(self, ok: bool) -> None:
        """One request finished (`ok`: the server answered)."""
        self.answered += 1
        self.failed += not ok

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        if not self.answered:
            return (f"  {self.what}: 0/{self.total:,} answered after {elapsed:,.0f} s, waiting on the first"
                    + (f" ({self.waiting_on})" if self.waiting_on else ""))
        rate = self.answered / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.answered) / rate if rate > 0 else float("inf")
        return (f"  {self.what}: {self.answered:,}/{self.total:,} answered, {self.failed:,} failed, "
                f"{rate:,.2f}/s, ETA {left:,.0f} s")

    def _tick(self) -> None:
        while not self._stop.wait(self.every_s):
            self.log(self.line())

    def __enter__(self) -> "RequestProgress":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        if self.answered:
            self.log(self.line())
