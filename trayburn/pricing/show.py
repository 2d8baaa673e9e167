"""What `trayburn prices` and `doctor` say about prices: every model the ledger has seen, one row per canonical
key, with its calls, tokens and whether a price applies on each route it took; and, for `trayburn prices
MODEL…`, which price applies to a model id on a route and where it came from. Never speaks SQL (the ledger's
rows are given) and never prints (the CLI does).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..billing import FREE, PAID, PLAN, route_of
from .book import PriceBook
from .price import KINDS, Period, Rate

if TYPE_CHECKING:
    from ..ledger import ModelSeen


@dataclass
class SeenModel:
    """A model seen in the ledger, with the ids and routes it came by and its calls and tokens."""

    name: str
    key: str
    ids: list[str] = field(default_factory=list)  # as Cline wrote them
    routes: list[str] = field(default_factory=list)  # '' when neither the call nor its session named one
    calls: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    no_cost_calls: int = 0  # calls without a reported cost: what a price estimates
    unpriced_calls: int = 0  # of those, the ones on a route with no known price
    sources: list[str] = field(default_factory=list)  # where its prices come from (genai-prices provider, settings)
    unpriced_routes: list[str] = field(default_factory=list)
    billing: list[str] = field(default_factory=list)  # "plan", "free": the routes it was called on that cost $0

    @property
    def priced(self) -> bool:
        """A price applies on every route it was called on."""
        return not self.unpriced_routes

    @property
    def tokens(self) -> int:
        return self.input + self.output

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["priced"] = self.priced
        return out


def seen(book: PriceBook, rows: Iterable[ModelSeen]) -> list[SeenModel]:
    """One row per model key: those with unpriced calls first, then the others with no price, then by calls."""
    models: dict[str, SeenModel] = {}
    for r in rows:
        m = r.route
        key = book.key(m.model, m.provider, m.session_provider)
        row = models.setdefault(key, SeenModel(book.name_of(key), key))
        price = book.prices(m.model, m.provider, m.session_provider)
        route = route_of(m.provider, m.session_provider)
        _add(row.ids, m.model or "")
        _add(row.routes, route)
        row.calls += r.calls
        row.input, row.output = row.input + r.input, row.output + r.output
        row.cache_read, row.cache_write = row.cache_read + r.cache_read, row.cache_write + r.cache_write
        row.no_cost_calls += r.no_cost_calls
        billed = book.billed(m.model, m.provider, m.session_provider)
        if billed != PAID:  # $0 whatever the price: a plan's (valued at it) or a free model's
            _add(row.billing, billed)
        if price is None:
            if billed == PAID:
                row.unpriced_calls += r.no_cost_calls
                _add(row.unpriced_routes, route)
        else:
            _add(row.sources, price.provider if price.source == "genai-prices" and price.provider else price.source)
    return sorted(models.values(), key=lambda s: (not s.unpriced_calls, s.priced, -s.calls, s.name))


def _add(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)


def how_to_price(key: str) -> list[str]:
    """The lines that say how to give a model a price (here and in `trayburn prices MODEL`)."""
    return [
        "To price a model, add its rates to the settings file (`trayburn config path` shows where),",
        f'in USD per million tokens: [prices."{key}"] input = …, output = … (cache_read, cache_write optional),',
        f"or run `trayburn config set prices.{key}.input 0.6` and the same for output.",
        "`trayburn prices MODEL` shows the rates that apply to a model and where they come from.",
    ]


LABELS = {"input": "input", "output": "output", "cache_read": "cache read", "cache_write": "cache write"}


def describe(book: PriceBook, raw: str, provider: str | None = None) -> dict[str, Any]:
    """Plain data for one model id: how its calls are billed on that route (paid, plan or free), its key and
    name, its price by kind and tier, and its source."""
    price = book.prices(raw, provider)
    key = book.key(raw, provider)
    billed = book.billed(raw, provider)
    out: dict[str, Any] = {
        "model": raw,
        "route": route_of(provider) or None,
        "billing": billed,
        "plan": book.billing.name(route_of(provider)) if billed == PLAN else None,
        "key": key,
        "name": book.display(raw, provider),
        "priced": price is not None,
        "source": None,
        "genai_prices": None,
        "periods": [],
        "missing": [],  # the kinds a settings price lacks to be one (half a price is no price)
    }
    if price is None:
        given = book.overrides.get(key, {})
        out["missing"] = [k for k in ("input", "output") if given and k not in given]
        return out
    out["source"] = price.source
    if price.provider:
        out["genai_prices"] = {"provider": price.provider, "model": price.model, "version": price.version}
    out["periods"] = [_period(p) for p in price.periods]
    return out


def _period(p: Period) -> dict[str, Any]:
    def kind(rate: Rate | None) -> dict[str, Any] | None:  # None: charged as uncached input
        if rate is None:
            return None
        return {"base": rate.base, "tiers": [{"above_input": s, "price": v} for s, v in rate.tiers]}

    daily = None if p.daily is None else [_hhmm(p.daily[0]), _hhmm(p.daily[1])]
    usd = {k: kind(getattr(p.rates, k)) for k in KINDS}
    return {"since": p.since, "daily_utc": daily, "usd_per_million": usd, "usd_per_call": p.rates.request}


def render(items: list[dict[str, Any]]) -> str:
    return "\n\n".join(_one(item) for item in items)


BILLED = {
    PAID: "paid: its reported cost, else an estimate from its tokens at its list price",
    PLAN: "covered by {plan}: $0 of spend whatever cost Cline wrote; its tokens at list price are its API value",
    FREE: "a free model: $0 of spend, never priced",
}


def _one(d: dict[str, Any]) -> str:
    route = f" on {d['route']}" if d["route"] else ""
    lines = [f"{d['model']}{route}: {d['name']}", "  a call is " + BILLED[d["billing"]].format(plan=d["plan"])]
    if d["billing"] == FREE:
        return "\n".join(lines)
    if not d["priced"]:
        k = d["key"]
        lines.append("  no known price: its calls are shown as unpriced, never $0.")
        if d.get("missing"):
            given = " and ".join(x for x in ("input", "output") if x not in d["missing"])
            lines.append(
                f"  The settings file gives its {given} price but not its {' and '.join(d['missing'])} price:"
                " a price needs both."
            )
        lines += [f"  {line}" for line in how_to_price(k)[:3]]
        return "\n".join(lines)
    g = d["genai_prices"]
    where = f"genai-prices {g['version']}, provider {g['provider']}, model {g['model']}" if g else ""
    if d["source"] == "settings":
        where = "the settings file" + (f" (other rates: {where})" if where else "")
    lines.append(f"  price from {where}")
    for period in d["periods"]:
        lines += _table(period, len(d["periods"]) > 1)
    return "\n".join(lines)


def _table(period: dict[str, Any], labelled: bool) -> list[str]:
    usd = period["usd_per_million"]
    starts = sorted({t["above_input"] for k in KINDS if usd[k] for t in usd[k]["tiers"]})
    lines = []
    if labelled:
        parts = [f"from {period['since']}"] if period["since"] else []
        parts += ["daily {}-{} UTC".format(*period["daily_utc"])] if period["daily_utc"] else []
        lines.append("  " + (" ".join(parts) or "at other times") + ":")
    lines.append("  USD per million tokens     " + "".join(f"{LABELS[k]:>13}" for k in KINDS))
    bands = [(0, "any call" if not starts else f"input ≤ {starts[0]:,}")]
    bands += [(s, f"input > {s:,}") for s in starts]
    for size, label in bands:
        cells = [_cell(usd[k], size) for k in KINDS]
        lines.append(f"  {label:<27}" + "".join(f"{c:>13}" for c in cells))
    if period["usd_per_call"]:
        lines.append(f"  plus {period['usd_per_call']:g} USD per call")
    return lines


def _cell(rate: dict[str, Any] | None, above: int) -> str:
    if rate is None:
        return "as input"
    price = rate["base"]
    for tier in rate["tiers"]:
        if above >= tier["above_input"]:
            price = tier["price"]
    return f"{price:g}"


def _hhmm(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
