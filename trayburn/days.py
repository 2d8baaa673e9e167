"""Days and instants: local midnights (TZ and DST respected), ISO text, the time zone's name."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta


def local_midnight_ms(day: date) -> int:
    """Epoch ms of local midnight (TZ respected, DST included)."""
    return int(datetime(day.year, day.month, day.day).timestamp() * 1000)


def day_bounds(day: date) -> tuple[int, int]:
    return local_midnight_ms(day), local_midnight_ms(day + timedelta(days=1))


def timezone_name() -> str:
    tz = os.environ.get("TZ", "").strip().lstrip(":")
    if tz:
        return tz
    try:
        link = os.readlink("/etc/localtime")
        if "zoneinfo/" in link:
            return link.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    return datetime.now().astimezone().tzname() or "local"


def iso_local(ms: int | None) -> str | None:
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000).astimezone().isoformat(timespec="seconds")


def now_date() -> date:
    return datetime.now().date()


def utc_now_ms() -> int:
    return int(datetime.now(UTC).timestamp() * 1000)
