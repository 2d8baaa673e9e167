"""Amounts in the person's currency: US dollars converted at the rate they set (`usd_rate`, units of
`currency` per dollar; trayburn never fetches a rate), written the way their locale writes money.

Every figure is kept in USD; only what is shown is converted. USD, the default, is written by trayburn's
own `usd` and never loads Babel. Any other currency is formatted by Babel (CLDR data: the
symbol, where it goes, the decimals a currency has, the locale's separators), imported on first use.
Without a rate the amounts stay in USD and `note` says why.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import NamedTuple

USD = "USD"
LOCALE_VARIABLES = ("LC_ALL", "LC_MONETARY", "LANG")
FALLBACK_LOCALE = "en_US"


class Money(NamedTuple):
    """The currency figures are shown in, its rate to the US dollar and the locale that formats it."""

    currency: str = USD  # what the person asked for
    usd_rate: float | None = None  # units of `currency` per US dollar
    locale: str = FALLBACK_LOCALE

    @property
    def shown(self) -> str:
        """The currency amounts are shown in: the one asked for when its rate is known, else USD."""
        return self.currency if self.converts else USD

    @property
    def converts(self) -> bool:
        return self.currency != USD and self.usd_rate is not None and self.usd_rate > 0

    @property
    def note(self) -> str | None:
        """Why amounts are in USD although another currency was asked for."""
        if self.currency != USD and not self.converts:
            return f"amounts in USD: set usd_rate (how many {self.currency} make one US dollar) to show {self.currency}"
        return None

    @property
    def symbol(self) -> str:
        """The shown currency's symbol in this locale ("$", "€", "¥", "CHF"), for the tray icon's label."""
        if not self.converts:
            return "$"
        from babel.numbers import get_currency_symbol  # (Babel: only for a currency other than USD)

        return str(get_currency_symbol(self.currency, locale=_locale(self.locale)))

    def amount(self, usd: float | None) -> float | None:
        """The amount in the shown currency."""
        if usd is None:
            return None
        return usd * self.usd_rate if self.converts and self.usd_rate else usd

    def text(self, usd: float | None, estimated: bool = False, decimals: int | None = None) -> str:
        """E.g. "$1.50", "1,38 €", "€0.0042"; "unpriced" for None; "*" marks an estimate. `decimals`: a
        fixed precision (one per table column), else two, or four below one cent."""
        mark = "*" if estimated else ""
        if usd is None or (not self.converts and decimals is None):
            return _usd(usd, estimated)
        value = self.amount(usd) or 0.0
        if not self.converts:
            return f"${value:,.{decimals}f}{mark}"
        return _format(value, self.currency, self.locale, decimals) + mark

    def cents(self, usd: float | None) -> str:
        """The menu's and the window's one precision: cents from one cent up ("$0.09", "$12.40"), "<$0.01"
        below (never "$0.0084" beside "$0.09"), "$0.00" for nothing, "unpriced" for None. Other currencies as
        `text` writes them."""
        if usd is not None and not self.converts:
            return "<$0.01" if 0 < usd < 0.01 else f"${usd:,.2f}"
        return self.text(usd)

    def decimals(self, amounts_usd: Iterable[float | None]) -> int:
        """One precision for a column of amounts: the currency's own (two for USD and EUR, none for JPY), two
        more when one of them is a fraction of its smallest unit (a cent, a yen)."""
        digits = _digits(self.shown)
        small = any(a is not None and 0 < abs(self.amount(a) or 0) < 10**-digits for a in amounts_usd)
        return digits + 2 if small else digits

    def to_json(self, usd: float | None) -> dict:
        """The converted fields a JSON object carries beside its `cost_usd`."""
        value = self.amount(usd)
        return {"cost": None if value is None else round(value, 9), "currency": self.shown}


def from_settings(settings, env: Mapping[str, str] | None = None) -> Money:
    """The person's currency, rate and locale (from LC_ALL, LC_MONETARY or LANG)."""
    return Money(settings.currency or USD, settings.usd_rate, locale_of(os.environ if env is None else env))


def locale_of(env: Mapping[str, str]) -> str:
    for name in LOCALE_VARIABLES:
        value = (env.get(name) or "").split(".")[0].split("@")[0]
        if value and value not in ("C", "POSIX"):
            return value
    return FALLBACK_LOCALE


def _format(value: float, currency: str, locale: str, decimals: int | None = None) -> str:
    from babel.numbers import format_currency  # (Babel: only for a currency other than USD)

    loc = _locale(locale)
    digits = _digits(currency)
    if decimals is None and value != 0 and abs(value) < 10**-digits:
        decimals = digits + 2  # a cheap call keeps its figure ($0.0042, ¥0.39): never written as 0
    try:
        if decimals is None:
            return format_currency(value, currency, locale=loc)
        pattern = loc.currency_formats["standard"].pattern.split(";")[0]
        fixed = re.sub(
            r"0(\.0+)?(?=[^0-9#.,]*$|[^0-9#.,])", "0" + ("." + "0" * decimals if decimals else ""), pattern, count=1
        )
        return format_currency(value, currency, format=fixed, locale=loc, currency_digits=False)
    except (ValueError, TypeError):  # pragma: no cover - the settings validate the code's shape only
        return f"{value:,.{decimals if decimals is not None else 2}f} {currency}"


@lru_cache(maxsize=8)
def _digits(currency: str) -> int:
    """The decimals a currency is written with (ISO 4217 via CLDR: USD 2, JPY 0, BHD 3)."""
    if currency == USD:
        return 2
    from babel.numbers import get_currency_precision  # (Babel: only for a currency other than USD)

    try:
        return int(get_currency_precision(currency))
    except (ValueError, TypeError, LookupError):  # pragma: no cover - babel answers 2 for unknown codes
        return 2


@lru_cache(maxsize=8)
def _locale(name: str):
    from babel import Locale, UnknownLocaleError  # (Babel: only for a currency other than USD)

    try:
        return Locale.parse(name)
    except (ValueError, TypeError, UnknownLocaleError):
        return Locale.parse(FALLBACK_LOCALE)


def usd(value: float | None, estimated: bool = False) -> str:
    if value is None:
        return "unpriced"
    text = f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"
    return text + ("*" if estimated else "")


_usd = usd  # `Money.text`'s parameter is called usd too
