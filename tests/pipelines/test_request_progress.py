"""The progress line of model requests: waiting is said while nothing has come back, then done / total,
failed, rate and ETA every few seconds, and once more at the end."""

import time

from pipelines.infra.request_progress import RequestProgress


def test_a_slow_server_is_never_silence_and_the_end_is_counted():
    lines: list[str] = []
    with RequestProgress("label", 3, lines.append, every_s=0.05, waiting_on="max_tokens 32,768") as progress:
        time.sleep(0.12)  # nothing back yet: lines that say so
        assert lines and all("0/3 answered after" in l and "waiting on the first (max_tokens 32,768)" in l
                             for l in lines)
        progress.done(True)
        progress.done(False)
        time.sleep(0.08)
        assert "2/3 answered, 1 failed" in lines[-1] and "/s, ETA" in lines[-1]
        progress.done(True)
    assert lines[-1].startswith("  label: 3/3 answered, 1 failed") and lines[-1].endswith("ETA 0 s")
    assert not progress._thread.is_alive()  # the ticking stops with the requests
