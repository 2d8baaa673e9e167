"""The only module that imports genai-prices (its bundled data snapshot; never its network updater).

It is imported when a (model, route) pair is not in the cache yet: `resolve()` finds the price a call
on that route pays and turns it into a plain `Price`; `name()` finds the vendor's spelling of a model.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, time
from typing import Any

from . import routes
from .keys import same_model
from .price import Period, Price, Rate, Rates

log = logging.getLogger(__name__)


def version() -> str:
    import genai_prices

    return str(genai_prices.__version__)


def resolve(ref: str, route: str) -> tuple[Price, str] | None:
    """The price of `ref` on `route`, with the genai-prices model id it matched; None when unknown."""
    for provider_id, candidate in routes.lookups(ref, route):
        found = _find(provider_id, candidate)
        if found is None:
            continue
        provider, model = found
        price = _price(model, provider.id)
        if price is not None:
            return price, str(model.id)
    return None


def name(key: str) -> str | None:
    """The vendor's spelling of the model `key` ("GLM-4.6", "Claude Sonnet 4.5"), trying the vendor first."""
    for provider_id, candidate in routes.lookups(key):
        found = _find(provider_id, candidate)
        spelled = found and same_model(key, str(found[1].id)) and found[1].name
        if spelled and spelled[0].isupper():
            return str(spelled)
    return None


def _find(provider_id: str | None, ref: str) -> tuple[Any, Any] | None:
    from genai_prices import data_snapshot

    try:
        return data_snapshot.get_snapshot().find_provider_model(ref, None, provider_id, None)
    except LookupError:
        return None
    except Exception as exc:  # broken data must not break the figures: that model stays unpriced
        log.warning("genai-prices failed on %r (%s): %s", ref, provider_id, exc)
        return None


def _price(model: Any, provider_id: str) -> Price | None:
    from genai_prices.types import ModelPrice

    listed = (
        [(None, model.prices)]
        if isinstance(model.prices, ModelPrice)
        else [(c.constraint, c.prices) for c in model.prices]
    )
    periods = []
    for constraint, prices in listed:
        rates = _rates(prices)
        if rates is None:
            return None  # no input or no output price: not a price for a chat call
        periods.append(_period(constraint, rates))
    if not periods:
        return None
    return Price(tuple(periods), "genai-prices", provider_id, str(model.id), version())


def _rates(prices: Any) -> Rates | None:
    got = {
        kind: _rate(getattr(prices, f"{kind}_mtok", None)) for kind in ("input", "output", "cache_read", "cache_write")
    }
    if got["input"] is None or got["output"] is None:
        return None
    per_k = getattr(prices, "requests_kcount", None)
    request = float(per_k) / 1000 if per_k is not None and not hasattr(per_k, "tiers") else 0.0
    return Rates(got["input"], got["output"], got["cache_read"], got["cache_write"], request)


def _rate(value: Any) -> Rate | None:
    if value is None:
        return None
    if hasattr(value, "tiers"):
        return Rate(float(value.base), tuple((int(t.start), float(t.price)) for t in value.tiers))
    return Rate(float(value))


def _period(constraint: Any, rates: Rates) -> Period:
    if constraint is None:
        return Period(rates)
    start_date = getattr(constraint, "start_date", None)
    if isinstance(start_date, date):
        return Period(rates, since=start_date.isoformat())
    return Period(rates, daily=(_utc_seconds(constraint.start_time), _utc_seconds(constraint.end_time)))


def _utc_seconds(value: time) -> int:
    if value.tzinfo is not None:
        value = datetime.combine(date(1970, 1, 1), value).astimezone(UTC).timetz()
    return value.hour * 3600 + value.minute * 60 + value.second
