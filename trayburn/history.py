"""History: any period's figures by day, week, month, project, model, session or source, as plain data.

Two grouped queries per report (`history_queries`), whatever the number of sessions: the sums per
(part, group, model) and which sessions were active where. Estimated costs are made in one place,
`priced()`. The total is priced from the same sums added up per model, so the rows and the total
agree, and a test can check both against the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from . import history_queries as hq
from .ledger import Ledger
from .money import Money
from .period import Period, cut, part_key
from .pricing import PriceBook
from .report import Totals, display_title, timezone_name

BY = ("day", "week", "month", "project", "model", "session", "source")
TIME_BY = ("day", "week", "month")
NO_PROJECT = "(no folder)"
NO_SOURCE = "unknown"


@dataclass
class Group:
    key: str
    label: str
    totals: Totals = field(default_factory=Totals)
    sessions: int = 0
    since: date | None = None  # the days of a day, week or month row
    until: date | None = None

    @property
    def cost_usd(self) -> float | None:
        """None when none of the calls has a price (never $0)."""
        t = self.totals
        return None if t.calls and t.unpriced_calls >= t.calls else t.cost_usd

    def to_json(self, money: Money) -> dict:
        t = self.totals
        out: dict = {"key": self.key}
        if self.label != self.key:
            out["label"] = self.label
        if self.since is not None and self.until is not None:
            out["since"], out["until"] = self.since.isoformat(), self.until.isoformat()
        cost = self.cost_usd
        out.update(
            cost_usd=None if cost is None else round(cost, 9),
            estimated_cost_usd=round(t.estimated_usd, 9),
            calls=t.calls,
            sessions=self.sessions,
            tokens={
                "input": t.tokens.input,
                "output": t.tokens.output,
                "cache_read": t.tokens.cache_read,
                "cache_write": t.tokens.cache_write,
            },
            unpriced_calls=t.unpriced_calls,
        )
        if money.currency != "USD":
            out.update(money.to_json(cost))
        return out


@dataclass
class HistoryReport:
    period: Period
    by: str
    timezone: str
    rows: list[Group]
    total: Group

    def to_json(self, money: Money | None = None) -> dict:
        money = money or Money()
        out = {
            "since": self.period.since.isoformat(),
            "until": self.period.until.isoformat(),
            "by": self.by,
            "timezone": self.timezone,
            "rows": [g.to_json(money) for g in self.rows],
            "total": self.total.to_json(money),
        }
        if money.currency != "USD":
            out["currency"], out["usd_rate"] = money.shown, money.usd_rate
        return out


def priced(rows: Iterable[hq.ModelSums], book: PriceBook) -> Totals:
    """THE place a group's calls become cost, estimate and unpriced calls: its sums per model, each
    estimated where no cost was reported (per-call prices go here when the ledger keeps them)."""
    totals = Totals()
    for r in rows:
        totals.add(r.model, r.sums, book)
    return totals


def report(ledger: Ledger, book: PriceBook, period: Period, by: str = "day") -> HistoryReport:
    if by not in BY:
        raise ValueError(f"cannot group by '{by}': use one of {', '.join(BY)}")
    parts = cut(period, by) if by in TIME_BY else [period]
    buckets = [hq.Bucket(i, *p.bounds_ms()) for i, p in enumerate(parts)]
    group = "time" if by in TIME_BY else by
    with ledger._lock:  # noqa: SLF001 - one read at a time on the shared connection, as Ledger.query does
        sums = hq.model_sums(ledger.db, buckets, group)
        present = hq.presence(ledger.db, buckets, group)
    name = _namer(by, book, parts, ledger)
    by_key: dict[str, list[hq.ModelSums]] = {}
    for r in sums:
        by_key.setdefault(name(r.bucket, r.key, r.model)[0], []).append(r)
    seen: dict[str, set[str]] = {}
    for p in present:
        seen.setdefault(name(p.bucket, p.key, p.key)[0], set()).add(p.session_id)
    groups = {}
    if by in TIME_BY:  # every day (week, month) of the period, those without calls too
        for part in parts:
            key = part_key(part, by)
            groups[key] = Group(key, key, since=part.since, until=part.until)
    for r in sums:
        key, label = name(r.bucket, r.key, r.model)
        groups.setdefault(key, Group(key, label))
    for key, g in groups.items():
        g.totals = priced(by_key.get(key, []), book)
        g.sessions = len(seen.get(key, ()))
    rows = list(groups.values())
    if by not in TIME_BY:
        rows.sort(key=lambda g: (-(g.totals.cost_usd), -g.totals.calls, g.label.casefold()))
    total = Group("total", "total", since=period.since, until=period.until)
    total.totals = priced(_per_model(sums), book)
    total.sessions = len({p.session_id for p in present})
    return HistoryReport(period, by, timezone_name(), rows, total)


def _per_model(rows: Iterable[hq.ModelSums]) -> list[hq.ModelSums]:
    """The sums added up per model over every part and group (the total, priced like any group)."""
    merged: dict[str | None, list] = {}
    for r in rows:
        acc = merged.setdefault(r.model, [0] * len(r.sums))
        for i, x in enumerate(r.sums):
            acc[i] += x
    return [hq.ModelSums(0, None, model, *acc) for model, acc in merged.items()]


def _namer(by: str, book: PriceBook, parts: list[Period], ledger: Ledger):
    """(key, label) of a row from a query row's part, group key and model."""
    if by in TIME_BY:
        keys = [part_key(p, by) for p in parts]
        return lambda bucket, key, model: (keys[bucket], keys[bucket])
    if by == "model":
        return lambda bucket, key, model: (book.key(model), book.display(model))
    if by == "project":
        return lambda bucket, key, model: (project_name(key),) * 2
    if by == "source":
        return lambda bucket, key, model: ((key or NO_SOURCE),) * 2
    with ledger._lock:  # noqa: SLF001
        titles = {t.id: display_title(t.title, t.prompt) for t in hq.titles(ledger.db)}
    return lambda bucket, key, model: (key, titles.get(key, key))


def project_name(path: str | None) -> str:
    """A session's project: the last part of its workspace root (else its folder), whichever the
    separator (a ledger can hold sessions synced from another system)."""
    if not path:
        return NO_PROJECT
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path
