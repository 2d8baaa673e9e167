"""What the icon says: today's cost in at most 4 characters, and the state that colours it.

No drawing here (the tray's model imports it without Pillow).
"""

from __future__ import annotations

import enum
import math

NO_DATA_LABEL = "\u2013"  # en dash; drawn as a bar (Pillow's font has no glyph)


class IconState(enum.Enum):
    NO_DATA = "no_data"  # nothing recorded yet: greyed mark, "–"
    OK = "ok"  # below 80% of the budget, or no budget
    WARN = "warn"  # >= 80% of the budget: label on amber
    OVER = "over"  # >= 100% of the budget: label on red
    PROBLEM = "problem"  # Cline's folders missing or unreadable: "!" badge


def format_cost(usd: float | None) -> str:
    """Today's cost as a label of at most 4 characters, for a 16-24 px icon.

    None (or NaN/inf) -> "–" (no data); below half a cent -> "$0";
    below $9.995 -> two decimals ("4.21", "0.07");
    below $999.5 -> whole dollars ("12", "123");
    then thousands ("1.2k", "12k", "999k"), millions ("1.0M") and so on.
    There is no "$" except on "$0": every character costs legibility.
    """
    if usd is None or not math.isfinite(usd):
        return NO_DATA_LABEL
    if usd < 0.005:
        return "$0"
    if usd < 9.995:
        return f"{usd:.2f}"
    if usd < 999.5:
        return f"{usd:.0f}"
    return _with_suffix(usd)


def format_money(amount: float | None, symbol: str) -> str:
    """Today's cost in another currency than USD: its symbol and a figure of at most 4 characters
    ("€4.2", "€12", "¥632", "¥12k", "¥150k"); no symbol when it has more than one character ("CHF").

    None (or NaN/inf) -> "–"; below 0.05 -> symbol and "0"; below 9.95 -> one decimal;
    below 999.5 -> whole units; then "1k" to "999k", "1M" to "999M" and so on.
    """
    if amount is None or not math.isfinite(amount):
        return NO_DATA_LABEL
    mark = symbol if len(symbol) == 1 else ""
    if amount < 0.05:
        return mark + "0"
    if amount < 9.95:
        return f"{mark}{amount:.1f}"
    if amount < 999.5:
        return f"{mark}{amount:.0f}"
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        if amount / divisor < 999.5:
            return f"{mark}{amount / divisor:.0f}{suffix}"
    return mark + "1T+"


def _with_suffix(usd: float) -> str:
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = usd / divisor
        if scaled < 9.95:
            return f"{scaled:.1f}{suffix}"
        if scaled < 999.5:
            return f"{scaled:.0f}{suffix}"
    return "1T+"
