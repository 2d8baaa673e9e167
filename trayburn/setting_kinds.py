"""The kinds of setting: how a value is checked when read from the settings file, and read from the text typed
after `trayburn config set KEY`. Each raises ValueError with a plain message (settings.py says which key).

A setting's declaration (settings.py `Settings`) names its kind; a new kind of value is a class here.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Kind(Generic[T]):
    """A setting's type: `check` takes a value from the file (ValueError with a plain message when it is not
    one), `parse` the text typed on the command line (ValueError)."""

    table = False  # a TOML table, also set an entry at a time (`aliases.M`, `prices.M.input`)

    def check(self, value: Any) -> T:
        raise NotImplementedError

    def parse(self, key: str, text: str) -> Any:
        return text

    def readme_key(self, key: str) -> str:
        return f"`{key}`"


class Text(Kind[str | None]):
    """A string, stripped; empty is unset."""

    def __init__(self, what: str = "a string"):
        self.what = what

    def check(self, value: Any) -> str | None:
        if not isinstance(value, str):
            raise ValueError(f"must be {self.what}")
        return value.strip() or None


class Whole(Kind[int]):
    """A whole number from `low` (to `high`)."""

    def __init__(self, unit: str, low: int, high: int | None = None):
        self.unit, self.low, self.high = unit, low, high

    def check(self, value: Any) -> int:
        high = self.high if self.high is not None else math.inf
        if isinstance(value, bool) or not isinstance(value, int) or not self.low <= value <= high:
            bounds = f" between {self.low} and {self.high}" if self.high is not None else f", at least {self.low}"
            raise ValueError(f"must be a whole number of {self.unit}{bounds}")
        return value

    def parse(self, key: str, text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{key} must be a whole number, not '{text}'") from None


class Number(Kind[float | None]):
    """A finite number, 0 or more (more than 0 when `positive`); 0 unsets it when `zero_is_off`."""

    def __init__(self, what: str, positive: bool = False, zero_is_off: bool = False):
        self.what, self.positive, self.zero_is_off = what, positive, zero_is_off

    def check(self, value: Any) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"must be {self.what}")
        if value < 0 or (self.positive and value == 0):
            raise ValueError(f"must be {self.what}")
        return (float(value) or None) if self.zero_is_off else float(value)

    def parse(self, key: str, text: str) -> float:
        return _number(key, text)


class Currency(Kind[str]):
    def check(self, value: Any) -> str:
        if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{3}", value.strip()):
            raise ValueError("must be a three-letter currency code such as USD, EUR or GBP")
        return value.strip().upper()


class Flag(Kind[bool]):
    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value

    def parse(self, key: str, text: str) -> bool:
        word = text.strip().lower()
        if word not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
            raise ValueError(f"{key} must be true or false, not '{text}'")
        return word in ("true", "yes", "on", "1")


class Choice(Kind[str]):
    def __init__(self, *values: str):
        self.values = values

    def check(self, value: Any) -> str:
        if value not in self.values:
            raise ValueError(f"must be one of {', '.join(self.values)}")
        return value


class Folders(Kind[list[str]]):
    """A list of folder paths (one string is a list of one); on the command line, joined by os.pathsep."""

    def check(self, value: Any) -> list[str]:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of folder paths (strings)")
        return [v.strip() for v in value if v.strip()]

    def parse(self, key: str, text: str) -> list[str]:
        return [p for p in text.split(os.pathsep) if p.strip()]


class Table(Kind[dict[str, T]]):
    """A TOML table, also set one entry at a time: `with_entry` returns it changed (text None: the entry removed)."""

    table = True

    def with_entry(self, table: dict, key: str, entry: str, text: str | None) -> dict:
        raise NotImplementedError


class Aliases(Table[str]):
    def check(self, value: Any) -> dict[str, str]:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError('must be a table of model = "canonical model" strings')
        return dict(value)

    def with_entry(self, table: dict, key: str, entry: str, text: str | None) -> dict:
        _update_table(table, entry, text)
        return table

    def readme_key(self, key: str) -> str:
        return f"`[{key}]`"


class Routes(Table[str]):
    """[billing] "route" = "plan" | "paid": a plan route trayburn does not know yet, or a known one counted as paid."""

    values = ("plan", "paid")

    def check(self, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            raise ValueError('must be a table of "route" = "plan" or "paid"')
        for route, said in value.items():
            if not route.strip() or said not in self.values:
                raise ValueError(f'"{route}" must be "plan" or "paid", not {said!r}')
        return dict(value)

    def with_entry(self, table: dict, key: str, entry: str, text: str | None) -> dict:
        if text is not None and text.strip().lower() not in self.values:
            raise ValueError(f"{key} must be plan or paid, not '{text}'")
        _update_table(table, entry, None if text is None else text.strip().lower())
        return table

    def readme_key(self, key: str) -> str:
        return f"`[{key}]`"


PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")


class Prices(Table[dict[str, float]]):
    """[prices."model"] tables of USD per million tokens."""

    def check(self, value: Any) -> dict[str, dict[str, float]]:
        if not isinstance(value, dict):
            raise ValueError('must be a table of [prices."model"] tables')
        out = {}
        for model, row in value.items():
            if not isinstance(row, dict):
                raise ValueError(f'prices."{model}" must be a table with {", ".join(PRICE_FIELDS)}')
            for k, v in row.items():
                if k not in PRICE_FIELDS:
                    raise ValueError(f'prices."{model}".{k} is unknown (use {", ".join(PRICE_FIELDS)})')
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < math.inf:
                    raise ValueError(f'prices."{model}".{k} must be USD per million tokens, 0 or more')
            out[model] = {k: float(v) for k, v in row.items()}
        return out

    def with_entry(self, table: dict, key: str, entry: str, text: str | None) -> dict:
        model, _, part = entry.rpartition(".")
        if part not in PRICE_FIELDS or not model:
            raise ValueError(f"use prices.MODEL.{{{','.join(PRICE_FIELDS)}}}, not '{key}'")
        row = table.setdefault(model, {})
        _update_table(row, part, None if text is None else _number(key, text))
        if not row:
            del table[model]
        return table

    def readme_key(self, key: str) -> str:
        return f'`[{key}."model"]`'


BUDGET_FIELDS = ("daily", "monthly")


class ProjectBudgets(Table[dict[str, float]]):
    """[project_budgets."project"] tables: `daily` and `monthly` in USD (0 turns one off)."""

    def check(self, value: Any) -> dict[str, dict[str, float]]:
        if not isinstance(value, dict):
            raise ValueError('must be a table of [project_budgets."project"] tables')
        out = {}
        for project, row in value.items():
            if not isinstance(row, dict):
                raise ValueError(f'project_budgets."{project}" must be a table with daily and/or monthly')
            for k, v in row.items():
                if k not in BUDGET_FIELDS:
                    raise ValueError(f'project_budgets."{project}".{k} is unknown (use daily or monthly)')
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < math.inf:
                    raise ValueError(f'project_budgets."{project}".{k} must be US dollars, 0 or more')
            kept = {k: float(v) for k, v in row.items() if v}
            if kept:
                out[project] = kept
        return out

    def with_entry(self, table: dict, key: str, entry: str, text: str | None) -> dict:
        project, _, part = entry.rpartition(".")
        if part not in BUDGET_FIELDS or not project:
            raise ValueError(f"use project_budgets.PROJECT.daily or .monthly, not '{key}'")
        row = table.setdefault(project, {})
        _update_table(row, part, None if text is None else _number(key, text))
        if not row:
            del table[project]
        return table

    def readme_key(self, key: str) -> str:
        return f'`[{key}."project"]`'


def _number(key: str, text: str) -> float:
    try:
        return float(text.lstrip("$"))
    except ValueError:
        raise ValueError(f"{key} must be a number, not '{text}'") from None


def _update_table(table: dict, key: str, value: Any) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
