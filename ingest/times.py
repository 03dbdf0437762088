"""Timestamps from agent logs: UTC when the source says which zone, None otherwise (never a guessed zone)."""

from __future__ import annotations

import datetime as dt


def parse_time(value) -> dt.datetime | None:
    """ISO-8601 with `Z` or an offset -> aware UTC; epoch seconds (or milliseconds) -> UTC; a naive ISO string
    (local time of an unknown zone), anything else -> None."""
    if type(value) is str and value[-1:] == "Z" and value[:1].isdigit():  # most logs: no whitespace to strip
        try:
            parsed = dt.datetime.fromisoformat(value[:-1] + "+00:00")
        except ValueError:
            return None
        return parsed if parsed.tzinfo is dt.timezone.utc else _stated_utc(parsed)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = value.strip()
        zulu = text.endswith(("Z", "z"))
        if zulu:
            text = text[:-1] + "+00:00"
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        if zulu:
            return _stated_utc(parsed)
        return parsed.astimezone(dt.timezone.utc) if parsed.tzinfo else None
    return None


def _stated_utc(parsed: dt.datetime) -> dt.datetime:
    """A time whose text said `Z`: a date alone (`2025-06-01Z`, `19460227Z`) parses without the offset, and
    `astimezone` would read that naive value as the machine's local time, so the stated UTC is put back."""
    return parsed.replace(tzinfo=dt.timezone.utc) if parsed.tzinfo is None else parsed.astimezone(dt.timezone.utc)
