"""Local days and periods of them: local midnights (TZ and DST respected), ISO text, the time zone's name,
what `--since`/`--until` mean, how a period steps back and forth, and how it is cut into days, weeks (Monday to
Sunday) or months. Never speaks SQL and never prices anything.

A period is a first and a last day, both included. Its bounds in epoch ms are local midnights
(`day_bounds`), so a day is a local day, 23 or 25 hours long across a DST change.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
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


KINDS = ("day", "week", "month", "range")
WORDS = ("today", "yesterday", "week", "last-week", "month", "last-month", "Nd (7d, 30d…)")
_DAYS = re.compile(r"^([1-9][0-9]{0,4})d$")
FIRST_YEAR, LAST_YEAR = 1970, 9998


class BadPeriod(ValueError):
    """A date or period word that cannot be read; the message says what to type instead."""


@dataclass(frozen=True)
class Period:
    """A span of whole local days, [since, until], and how it steps (day, week, month or range)."""

    since: date
    until: date
    kind: str = "range"  # day | week | month | range: how `step` moves and how it is named

    def __post_init__(self) -> None:
        if self.until < self.since:
            raise BadPeriod(f"the period ends ({self.until}) before it starts ({self.since})")

    @property
    def days(self) -> int:
        return (self.until - self.since).days + 1

    def bounds_ms(self) -> tuple[int, int]:
        """[start, end) in epoch ms: local midnight of the first day to that after the last day."""
        return local_midnight_ms(self.since), day_bounds(self.until)[1]

    def step(self, n: int) -> Period:
        """The period n steps later (earlier when n < 0): a day, a week, a month, or a range's own length."""
        if self.kind == "month":
            return month_of(_add_months(self.since, n))
        if self.kind == "week":
            return week_of(self.since + timedelta(weeks=n))
        delta = timedelta(days=self.days * n)
        return Period(self.since + delta, self.until + delta, self.kind)

    def contains(self, day: date) -> bool:
        return self.since <= day <= self.until

    def label(self) -> str:
        """ "Monday 30 November 2026", "Week of 23 November 2026", "November 2026", "1 Nov – 15 Dec 2026"."""
        s, u = self.since, self.until
        if self.kind == "day" or s == u:
            return f"{s:%A} {s.day} {s:%B %Y}"
        if self.kind == "week":
            return f"Week of {s.day} {s:%B %Y}"
        if self.kind == "month":
            return f"{s:%B %Y}"
        first = f"{s.day} {s:%b}" + ("" if s.year == u.year else f" {s.year}")
        return f"{first} – {u.day} {u:%b %Y}"


def day_of(day: date) -> Period:
    return Period(day, day, "day")


def week_of(day: date) -> Period:
    monday = day - timedelta(days=day.weekday())
    return Period(monday, monday + timedelta(days=6), "week")


def month_of(day: date) -> Period:
    first = day.replace(day=1)
    return Period(first, _add_months(first, 1) - timedelta(days=1), "month")


def of_kind(kind: str, day: date) -> Period:
    """The day, week or month holding `day`."""
    if kind not in ("day", "week", "month"):
        raise BadPeriod(f"'{kind}' is not a period: use day, week or month")
    return {"day": day_of, "week": week_of, "month": month_of}[kind](day)


def _add_months(day: date, n: int) -> date:
    months = day.year * 12 + day.month - 1 + n
    return date(months // 12, months % 12 + 1, 1)


# ---- --since / --until -----------------------------------------------------------------------------


def named(text: str, today: date) -> Period:
    """A date (YYYY-MM-DD) or a word, as the days it stands for: `7d` is the 7 days ending today,
    `month` this calendar month, `last-month` the one before."""
    word = text.strip().lower()
    m = _DAYS.match(word)
    if m:
        return Period(today - timedelta(days=int(m.group(1)) - 1), today)
    table = {
        "today": lambda: day_of(today),
        "yesterday": lambda: day_of(today - timedelta(days=1)),
        "week": lambda: week_of(today),
        "last-week": lambda: week_of(today - timedelta(weeks=1)),
        "month": lambda: month_of(today),
        "last-month": lambda: month_of(today.replace(day=1) - timedelta(days=1)),
    }
    if word in table:
        return table[word]()
    return day_of(parse_date(text))


def parse_date(text: str) -> date:
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise BadPeriod(f"'{text}' is not a date or a period (use YYYY-MM-DD or one of: {', '.join(WORDS)})") from None
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        raise BadPeriod(f"'{text}' is out of range (years {FIRST_YEAR} to {LAST_YEAR})")
    return day


def between(since: str | None, until: str | None, today: date) -> Period:
    """The period `--since S --until U` names: S's first day to U's last day. Without U: to today
    (or to S's last day when S lies ahead of today). Without S: from the first of U's month."""
    last = named(until, today).until if until else None
    if since:
        first_period = named(since, today)
        first = first_period.since
        if last is None:  # to today; a day ahead of today is a period of its own
            last = today if first <= today else first_period.until
    else:
        last = last or today
        first = last.replace(day=1)
    if last < first:
        raise BadPeriod(f"--until {last} is before --since {first}")
    return Period(first, last)


# ---- cutting a period ------------------------------------------------------------------------------


def cut(period: Period, by: str) -> list[Period]:
    """The days, weeks or months of a period, clipped to it (a period starting on a Wednesday has a short
    first week), so the parts add up to the whole."""
    if by == "day":
        return [day_of(period.since + timedelta(days=i)) for i in range(period.days)]
    if by not in ("week", "month"):
        return [period]
    parts, day = [], period.since
    while day <= period.until:
        whole = week_of(day) if by == "week" else month_of(day)
        parts.append(Period(day, min(whole.until, period.until), by))
        day = whole.until + timedelta(days=1)
    return parts


def part_key(part: Period, by: str) -> str:
    """How a part is named in a report: 2026-11-30, 2026-W48 (ISO week), 2026-11."""
    if by == "week":
        year, week, _ = part.since.isocalendar()
        return f"{year}-W{week:02d}"
    if by == "month":
        return f"{part.since:%Y-%m}"
    return part.since.isoformat()
