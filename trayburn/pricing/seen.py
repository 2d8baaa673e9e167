"""`trayburn prices` with no model, and `doctor`'s unpriced models: every model the ledger has seen,
one row per canonical key, with its calls, tokens and whether a price applies on each route it took."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from . import routes
from .book import PriceBook

if TYPE_CHECKING:
    from ..ledger import ModelSeen


@dataclass
class SeenModel:
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
        route = routes.route_of(m.provider, m.session_provider)
        _add(row.ids, m.model or "")
        _add(row.routes, route)
        row.calls += r.calls
        row.input, row.output = row.input + r.input, row.output + r.output
        row.cache_read, row.cache_write = row.cache_read + r.cache_read, row.cache_write + r.cache_write
        row.no_cost_calls += r.no_cost_calls
        if price is None:
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
