"""The ledger: every call seen in the sources' files, each counted once (see `store.Ledger`). Never knows a
source's layout: the ledger imports only `sources/base.py` of sources/.

schema.py    tables, versions, migrations, opening and recovery; what SQLite's errors mean (the typed errors)
store.py     the Ledger: refresh orchestration over Sources (stat → change? → write transactions, today's first)
writer.py    the Writer a source writes through, the settling of who counts each call, RefreshStats, and names
             kept byte-exact (not UTF-8) with session ids made printable
changes.py   what the writes changed in the figures' rows between two looks (a tray's kept figures)
queries.py   every typed read returning named rows (the only SQL the figures rely on): calls, periods, machines
salvage.py   what a damaged ledger keeps: the copy into a rebuilt ledger (and of a ledger deleted or replaced under
             a running trayburn), and what it held that nothing gave back
pages.py     a damaged SQLite file's rows read page by page, without SQLite
backups.py   the daily backups: made, checked, rotated by their own time; which a rebuild may trust
"""

from .queries import (
    ALL_TIME,
    BUCKETS_PER_QUERY,
    SESSION_CHUNK,
    Bucket,
    CallRecord,
    CostGroup,
    ModelSeen,
    ModelSums,
    Problem,
    Route,
    SessionCounts,
    SessionRow,
    Sums,
    Usage,
)
from .schema import (
    SCHEMA_VERSION,
    LedgerBusy,
    LedgerDamaged,
    LedgerError,
    LedgerFull,
    LedgerReadOnly,
    LedgerUnavailable,
)
from .store import Ledger
from .writer import RefreshStats

__all__ = [
    "ALL_TIME",
    "BUCKETS_PER_QUERY",
    "SCHEMA_VERSION",
    "Bucket",
    "CallRecord",
    "CostGroup",
    "Ledger",
    "LedgerBusy",
    "LedgerDamaged",
    "LedgerError",
    "ModelSeen",
    "LedgerFull",
    "LedgerReadOnly",
    "LedgerUnavailable",
    "ModelSums",
    "Problem",
    "RefreshStats",
    "Route",
    "SessionCounts",
    "SESSION_CHUNK",
    "SessionRow",
    "Sums",
    "Usage",
]
