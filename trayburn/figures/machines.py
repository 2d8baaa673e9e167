"""The figures split by machine (sharing through `sync_dir`): the menu's "Today $4.20 on 3 machines (this
one $1.10)", `today --json`'s `machines`, the window's and `report --by machine`'s split. No SQL, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..ledger import Ledger
from ..pricing import PriceBook
from .costs import Pricer
from .day import Totals, _r, priced_cost


@dataclass
class MachineCost:
    id: str | None  # None: this machine
    name: str
    this: bool
    cost_usd: float
    estimated_cost_usd: float
    calls: int
    unpriced_calls: int
    file_gone: bool = False  # its file left sync_dir: its history is kept, nothing new comes

    @property
    def known_cost(self) -> float | None:
        return priced_cost(self.cost_usd, self.calls, self.unpriced_calls)

    def to_json(self) -> dict:
        cost = self.known_cost
        return {
            "id": self.id,
            "name": self.name,
            "this": self.this,
            "cost_usd": None if cost is None else _r(cost),
            "estimated_cost_usd": _r(self.estimated_cost_usd),
            "calls": self.calls,
            "file_gone": self.file_gone,
        }


@dataclass
class MachinesReport:
    """Every machine the ledger holds (this one first, then by cost), over one range."""

    machines: list[MachineCost] = field(default_factory=list)

    @property
    def shared(self) -> bool:
        """Other machines are held: the split is worth showing."""
        return any(not m.this for m in self.machines)

    @property
    def cost_usd(self) -> float:
        return sum(m.cost_usd for m in self.machines)

    @property
    def active(self) -> int:
        """Machines with calls in the range."""
        return sum(1 for m in self.machines if m.calls)

    @property
    def this(self) -> MachineCost | None:
        return next((m for m in self.machines if m.this), None)

    def menu_line(self, money: Callable[[float], str] | None = None, label: str = "Today") -> str | None:
        """'Today $4.20 on 3 machines (this one $1.10)'; None while no other machine is held. `money`
        formats an amount in dollars (the display currency's formatter; default `$1.10`)."""
        if not self.shared:
            return None
        fmt = money or (lambda usd: f"${usd:,.2f}")
        this = self.this
        n = self.active
        if this is None or not this.calls:  # all of it elsewhere: say so rather than "(this one $0.00)"
            others = [m for m in self.machines if m.calls and not m.this]
            where = f"on {others[0].name}" if len(others) == 1 else f"on {n} other machines"
            return f"{label} {fmt(self.cost_usd)} {where}, none on this one" if others else None
        where = f"on {n} machine{'' if n == 1 else 's'}"
        return f"{label} {fmt(self.cost_usd)} {where} (this one {fmt(this.cost_usd)})"

    def to_json(self) -> list[dict]:
        return [m.to_json() for m in self.machines]


def machines_between(ledger: Ledger, book: PriceBook, start_ms: int, end_ms: int, this_name: str) -> MachinesReport:
    """Counted calls in [start, end) by the machine whose session holds them (`report --by machine`)."""
    totals: dict[str | None, Totals] = {None: Totals()}
    pricer = Pricer(ledger, book)
    for g in pricer.groups(start_ms, end_ms, by=("origin",)):
        totals.setdefault(g.by[0], Totals()).add(g, pricer)
    files = {f.origin: f for f in ledger.machine_files()}
    for held in files:
        totals.setdefault(held, Totals())
    out = []
    for origin, t in totals.items():
        f = files.get(origin) if origin else None
        name = this_name if origin is None else ((f.name if f else None) or str(origin))
        gone = bool(f and f.gone)
        out.append(
            MachineCost(origin, name, origin is None, t.cost_usd, t.estimated_usd, t.calls, t.unpriced_calls, gone)
        )
    out.sort(key=lambda m: (not m.this, -m.cost_usd, m.name))
    return MachinesReport(out)
