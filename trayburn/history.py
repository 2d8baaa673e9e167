"""History: any period's figures by day, week, month, project, model, session or source, as plain data.

Two queries per report (the ledger's `bucket_sums` and `session_keys`), whatever the number of
sessions: the sums per (part, session, model), and what each session is grouped by (its project,
source, title). Costs are priced in one place, `priced()` (and a single call's estimate, for the
export, by `call_estimator()` beside it). The total is priced from the same sums added up per model,
so the rows and the total agree, and a test can check both against the files.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from .ledger import Ledger
from .ledger import Sums as LedgerSums
from .ledger import periods as hq
from .money import Money
from .period import Period, cut, part_key
from .pricing import PriceBook
from .report import Totals, display_title, timezone_name

PerModel = dict[tuple[str | None, str | None], list]  # (model, provider) → sums, added up
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
        out: dict[str, object] = {
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


class Sums(Protocol):
    """Sums of calls of one model (`ledger.periods.BucketSums`, `ListedPart`)."""

    @property
    def model(self) -> str | None: ...

    @property
    def sums(self) -> LedgerSums: ...


def priced(rows: Iterable[Sums], book: PriceBook) -> Totals:
    """THE place calls become cost, estimate and unpriced calls (for reports, the window's periods and
    the sessions list): their sums per model, each estimated where no cost was reported. Per-call
    prices go here when the ledger keeps them."""
    totals = Totals()
    for r in rows:
        s = r.sums
        totals.calls += s.calls
        t = totals.tokens
        t.input, t.output, t.cache_read, t.cache_write = (
            t.input + s.input,
            t.output + s.output,
            t.cache_read + s.cache_read,
            t.cache_write + s.cache_write,
        )
        totals.reported_usd += s.reported_usd
        if s.unpriced_calls:
            est = book.estimate(
                r.model, s.unpriced_input, s.unpriced_output, s.unpriced_cache_read, s.unpriced_cache_write
            )
            if est is None:
                totals.unpriced_calls += s.unpriced_calls
            else:
                totals.estimated_usd += est
    return totals


CallEstimator = Callable[[str | None, int, int, int, int], float | None]


def call_estimator(book: PriceBook) -> CallEstimator:
    """The estimate of one call without a reported cost (the export's rows), as `priced` makes it for a
    group. Beside `priced`, the other place an estimate is made: per-call (tiered, provider-aware) prices
    go in both."""
    return book.estimate


def report(ledger: Ledger, book: PriceBook, period: Period, by: str = "day") -> HistoryReport:
    if by not in BY:
        raise ValueError(f"cannot group by '{by}': use one of {', '.join(BY)}")
    parts = cut(period, by) if by in TIME_BY else [period]
    rows, keys = _fetch(ledger, parts, keys=by not in TIME_BY)
    return _grouped(rows, keys, parts, period, by, book)


def overview(
    ledger: Ledger, book: PriceBook, period: Period, groupings: tuple[str, ...] = ("day", "project", "model", "source")
) -> dict[str, HistoryReport]:
    """Several groupings of one period from a single read (per day), as the window's period view shows."""
    days = cut(period, "day")
    rows, keys = _fetch(ledger, days, keys=True)
    return {by: _grouped(rows, keys, days if by == "day" else [period], period, by, book) for by in groupings}


def _fetch(ledger: Ledger, parts: list[Period], keys: bool) -> tuple[list[hq.BucketSums], dict[str, hq.SessionKeys]]:
    buckets = [hq.Bucket(i, *p.bounds_ms()) for i, p in enumerate(parts)]
    rows = ledger.bucket_sums(buckets)
    found = {k.id: k for k in ledger.session_keys()} if keys else {}
    return rows, found


def _grouped(
    rows: list[hq.BucketSums],
    keys: dict[str, hq.SessionKeys],
    parts: list[Period],
    period: Period,
    by: str,
    book: PriceBook,
) -> HistoryReport:
    """The rows of a report from sums per (part, session, model); for a grouping other than time, the
    parts' indexes are not looked at (any cut of the period will do)."""
    name = _namer(by, book, parts, keys)
    groups: dict[str, Group] = {}
    if by in TIME_BY:  # every day (week, month) of the period, those without calls too
        for part in parts:
            key = part_key(part, by)
            groups[key] = Group(key, key, since=part.since, until=part.until)
    sums: dict[str, PerModel] = {}  # group key → (model, provider) → sums (priced once per model)
    seen: dict[str, set[str]] = {}
    for r in rows:
        sid = r.key or ""  # rows from session_model_sums: the key is the session id
        key, label = name(r.bucket, sid, r.model)
        groups.setdefault(key, Group(key, label))
        _add(sums.setdefault(key, {}), r)
        seen.setdefault(key, set()).add(sid)
    for key, g in groups.items():
        g.totals = priced(_as_rows(sums.get(key, {})), book)
        g.sessions = len(seen.get(key, ()))
    ordered = list(groups.values())
    if by not in TIME_BY:
        ordered.sort(key=lambda g: (-(g.totals.cost_usd), -g.totals.calls, g.label.casefold()))
    total = Group("total", "total", since=period.since, until=period.until)
    every: PerModel = {}
    for per_model in sums.values():
        for row in _as_rows(per_model):
            _add(every, row)
    total.totals = priced(_as_rows(every), book)
    total.sessions = len({r.key for r in rows})
    return HistoryReport(period, by, timezone_name(), ordered, total)


def _add(per_model: PerModel, r: hq.BucketSums) -> None:
    key = (r.model, r.provider)
    acc = per_model.get(key)
    per_model[key] = list(r.sums) if acc is None else list(map(operator.add, acc, r.sums))


def _as_rows(per_model: PerModel) -> list[hq.BucketSums]:
    return [hq.BucketSums(0, None, model, provider, hq.Sums(*acc)) for (model, provider), acc in per_model.items()]


def _namer(
    by: str, book: PriceBook, parts: list[Period], keys: dict[str, hq.SessionKeys]
) -> Callable[[int, str, str | None], tuple[str, str]]:
    """(key, label) of a row from a query row's part, session and model."""
    if by in TIME_BY:
        part_keys = [part_key(p, by) for p in parts]
        return lambda bucket, sid, model: (part_keys[bucket], part_keys[bucket])
    if by == "model":
        names: dict[str | None, tuple[str, str]] = {}  # looked up once per model id, not once per row
        return lambda bucket, sid, model: (
            names.get(model) or names.setdefault(model, (book.key(model), book.display(model)))
        )
    if by == "project":
        projects = {sid: project_name(k.workspace_root or k.cwd) for sid, k in keys.items()}
        return lambda bucket, sid, model: (projects.get(sid, NO_PROJECT),) * 2
    if by == "source":
        sources = {sid: k.source or NO_SOURCE for sid, k in keys.items()}
        return lambda bucket, sid, model: (sources.get(sid, NO_SOURCE),) * 2
    titles = {sid: display_title(k.title, k.prompt) for sid, k in keys.items()}
    return lambda bucket, sid, model: (sid, titles.get(sid, sid))


def project_name(path: str | None) -> str:
    """A session's project: the last part of its workspace root (else its folder), whichever the
    separator (a ledger can hold sessions synced from another system)."""
    if not path:
        return NO_PROJECT
    return re.split(r"[/\\]", path.rstrip("/\\"))[-1] or path
