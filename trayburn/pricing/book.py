"""The price book: a model id as Cline writes it (and its route) → canonical key, display name and price, with
the resolved prices kept in a JSON cache, and the only import of genai-prices. Never speaks SQL, never imports
genai-prices on a warm run, never uses its network updater (only its bundled data snapshot).

Settings win: an alias renames a model before anything else, and a `[prices."model"]` table replaces
the shipped rates it names (the others stay). Half a price for a model genai-prices does not know is
no price: never charge a missing rate as $0. Everything genai-prices says is kept in the cache, so
a warm process prices known models without importing it.

genai-prices is imported when a (model, route) pair is not in the cache yet: `resolve()` finds the price a
call on that route pays and turns it into a plain `Price`; `name()` finds the vendor's spelling of a model.

The cache: one small JSON file in trayburn's state folder.

    {"format": 1,
     "stamp": {"data": "<size>:<mtime_ns> of genai-prices' data module", "settings": {prices, aliases},
               "trayburn": "<its version>"},
     "models": {"<route>\t<model id, lower case>": {"key": "glm-4-6", "price": {Price.to_json()} | null}},
     "names": {"glm-4-6": "GLM-4.6" | null}}

A different stamp (genai-prices or trayburn upgraded, the settings' prices or aliases edited) means the whole file
is ignored and rebuilt. Written atomically (a temp file in the same folder, then replace; mode 0600);
entries another process wrote meanwhile are kept. Reading it never imports genai-prices.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from ..billing import Billing, route_of
from .price import Period, Price, Rate, Rates, lookups, model_key, same_model, spelled

log = logging.getLogger(__name__)
FORMAT = 2


class Entry(NamedTuple):
    """A model id on a route: its canonical key, and the genai-prices price (None: unknown to it)."""

    key: str
    price: Price | None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "price": None if self.price is None else self.price.to_json()}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Entry:
        price = value.get("price")
        return cls(str(value["key"]), None if price is None else Price.from_json(price))


def data_stamp() -> str:
    """What identifies genai-prices' bundled data, found without importing it (nor importlib.util)."""
    for folder in sys.path:
        try:
            st = os.stat(os.path.join(folder or ".", "genai_prices", "data.py"))
        except OSError:
            continue
        return f"{st.st_size}:{st.st_mtime_ns}"
    try:  # a frozen app: its data changes only with the app itself
        st = os.stat(sys.executable)
    except OSError:
        return "unknown"
    return f"frozen:{st.st_size}:{st.st_mtime_ns}"


class PriceCache:
    """Entries and names in memory, backed by the file at `path` (None: memory only)."""

    def __init__(self, path: str | os.PathLike[str] | None, settings: dict[str, Any]):
        self.path = None if path is None else Path(path)
        from .. import __version__  # (how ids are routed to prices changes with trayburn: a new one resolves anew)

        self.stamp = {"data": data_stamp(), "settings": settings, "trayburn": __version__}
        self.models: dict[str, Entry] = {}
        self.names: dict[str, str | None] = {}
        self.unwritable = False  # a write failed: memory only from then on (said once, not at every price)
        self._load()

    def _load(self) -> None:
        data = self._read()
        if data is None:
            return
        try:
            self.models = {k: Entry.from_json(v) for k, v in data["models"].items()}
            self.names = {str(k): (None if v is None else str(v)) for k, v in data["names"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("ignoring the prices cache %s: %s", self.path, exc)
            self.models, self.names = {}, {}

    def _read(self, quiet: bool = False) -> dict[str, Any] | None:
        if self.path is None:
            return None
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            if not quiet:  # (said when loading; `save` reads it again)
                log.warning("ignoring the prices cache %s: %s", self.path, exc)
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("stamp") != self.stamp:
            return None
        return data

    def save(self) -> None:
        """Write the file, keeping what another process added since it was read. Once a write failed, the
        cache stays in memory for this process: each newly resolved price would fail (and say so) again."""
        if self.path is None or self.unwritable:
            return
        theirs = self._read(quiet=True) or {}
        models = {**(theirs.get("models") or {}), **{k: e.to_json() for k, e in self.models.items()}}
        names = {**(theirs.get("names") or {}), **self.names}
        text = json.dumps({"format": FORMAT, "stamp": self.stamp, "models": models, "names": names}, sort_keys=True)
        from ..files import atomic_write  # only when a new price was resolved: never on a warm run

        try:
            atomic_write(self.path, text.encode("utf-8"))
        except OSError as exc:  # an unwritable state folder costs speed, never figures
            self.unwritable = True
            log.warning("could not write the prices cache %s (kept in memory for now): %s", self.path, exc)


def version() -> str:
    import genai_prices  # (only for a model not in the cache)

    return str(genai_prices.__version__)


def resolve(ref: str, route: str) -> tuple[Price, str] | None:
    """The price of `ref` on `route`, with the genai-prices model id it matched; None when unknown."""
    for provider_id, candidate in lookups(ref, route):
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
    for provider_id, candidate in lookups(key):
        found = _find(provider_id, candidate)
        spelled = found and same_model(key, str(found[1].id)) and found[1].name
        if spelled and spelled[0].isupper():
            return str(spelled)
    return None


def _find(provider_id: str | None, ref: str) -> tuple[Any, Any] | None:
    from genai_prices import data_snapshot  # (only for a model not in the cache)

    try:
        return data_snapshot.get_snapshot().find_provider_model(ref, None, provider_id, None)
    except LookupError:
        return None
    except Exception as exc:  # broken data must not break the figures: that model stays unpriced
        log.warning("genai-prices failed on %r (%s): %s", ref, provider_id, exc)
        return None


def _price(model: Any, provider_id: str) -> Price | None:
    from genai_prices.types import ModelPrice  # (only for a model not in the cache)

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


class PriceBook:
    """Looks up canonical keys, display names and prices; settings' prices win over the shipped data."""

    def __init__(
        self,
        prices: Mapping[str, Mapping[str, float]] = {},
        aliases: Mapping[str, str] = {},
        cache: str | PathLike[str] | None = None,
        billing: Mapping[str, str] = {},
    ):
        """`billing`: the settings' `[billing]` table (route → "plan" | "paid"), what `self.billing` says of a
        call (plan, free or paid) besides the shipped rule."""
        self.billing = Billing.from_settings(billing)
        self.aliases = {model_key(k): v.strip() for k, v in aliases.items() if v and v.strip()}
        self.overrides = {model_key(m, aliases): dict(p) for m, p in prices.items()}
        settings = {"prices": {m: dict(p) for m, p in prices.items()}, "aliases": dict(aliases)}
        self._cache = PriceCache(cache, settings)
        self._lock = threading.Lock()

    def billed(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> str:
        """paid, plan or free: how a call of this model id on this route is billed (`billing.Billing.of`)."""
        return self.billing.of(route_of(provider, session_provider), raw)

    # ---- what a call's model is ------------------------------------------------------------------

    def _ref(self, raw: str | None) -> str:
        """The id to look up: an alias's target, else the id as written."""
        text = (raw or "").strip()
        return self.aliases.get(model_key(text), text) if text else ""

    def entry(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> Entry:
        ref = self._ref(raw)
        if not ref:
            return Entry("unknown", None)
        slot = f"{route_of(provider, session_provider)}\t{ref.lower()}"
        found = self._cache.models.get(slot)
        if found is None:
            found = self._resolve(slot, ref, route_of(provider, session_provider))
        return found

    def _resolve(self, slot: str, ref: str, route: str) -> Entry:
        pass

        with self._lock:
            hit = resolve(ref, route)
            own = model_key(ref)
            entry = Entry(model_key(hit[1]) if hit and same_model(own, hit[1]) else own, hit[0] if hit else None)
            self._cache.models[slot] = entry
            self._cache.save()
        return entry

    def key(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> str:
        """One key per model, whatever id or route it came by (`z-ai/glm-4.6`, `GLM-4.6` → `glm-4-6`)."""
        return self.entry(raw, provider, session_provider).key

    def display(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> str:
        """The model's name as its vendor spells it, chosen from its key alone (whatever ids were seen)."""
        return self.name_of(self.key(raw, provider, session_provider))

    def name_of(self, key: str) -> str:
        """The display name of a canonical key (the same for every id of the model, whatever was seen)."""
        if key == "unknown":
            return "unknown model"
        if key not in self._cache.names:
            pass

            with self._lock:
                self._cache.names[key] = name(key)
                self._cache.save()
        return self._cache.names[key] or spelled(key)

    # ---- what it costs -----------------------------------------------------------------------------

    def prices(self, raw: str | None, provider: str | None = None, session_provider: str | None = None) -> Price | None:
        """The price a call of this model on this route pays: settings over shipped; None when unknown."""
        entry = self.entry(raw, provider, session_provider)
        override = self.overrides.get(model_key(self._ref(raw))) or self.overrides.get(entry.key)
        return entry.price if override is None else _merged(entry.price, override)

    def tier_starts(self, calls: Iterable[tuple[str | None, str | None]]) -> list[int]:
        """Every input size at which the price of one of these (model id, route) pairs changes: the
        bands to group calls by in SQL before pricing each group's sums with `Price.cost(tier_input=)`."""
        prices = (self.prices(model, route) for model, route in calls)
        return sorted({start for p in prices if p is not None for start in p.tier_starts()})

    def call_cost(
        self,
        raw: str | None,
        input: int,
        output: int,
        cache_read: int,
        cache_write: int,
        provider: str | None = None,
        session_provider: str | None = None,
        at_ms: int | None = None,
    ) -> float | None:
        """USD for ONE call's tokens at its time (tiers and daily periods applied), None when unpriced."""
        price = self.prices(raw, provider, session_provider)
        return None if price is None else price.cost(input, output, cache_read, cache_write, at_ms)


def _merged(base: Price | None, override: Mapping[str, float]) -> Price | None:
    """The settings' rates over the shipped ones, kind by kind (tiers stay on the kinds not overridden)."""
    if base is None:
        if not {"input", "output"} <= override.keys():
            return None  # half a price is no price
        return Price.flat(
            override["input"], override["output"], override.get("cache_read"), override.get("cache_write")
        )

    def over(r: Rates) -> Rates:
        def pick(kind: str, shipped: Rate | None) -> Rate | None:
            return Rate(float(override[kind])) if kind in override else shipped

        return Rates(
            pick("input", r.input) or r.input,
            pick("output", r.output) or r.output,
            pick("cache_read", r.cache_read),
            pick("cache_write", r.cache_write),
            r.request,
        )

    periods = tuple(Period(over(p.rates), p.since, p.daily) for p in base.periods)
    return Price(periods, "settings", base.provider, base.model, base.version)
