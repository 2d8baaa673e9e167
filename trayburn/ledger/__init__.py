"""The ledger: every call seen in the sources' files, each counted once (see `store.Ledger`).

schema.py    tables, versions, migrations, opening and recovery
faults.py    what SQLite's errors mean for the ledger; the typed errors (never move a ledger on a full disk)
salvage.py   copying the rows a damaged, deleted or replaced ledger still yields
storable.py  names that are not UTF-8 kept byte-exact; session ids made printable
store.py     the Ledger: refresh orchestration (stat → change? → write transactions, today's files first)
refresh.py   the Writer a source writes through, and the settling of who counts each call
queries.py   typed reads returning named rows (the only SQL the report layer relies on)
periods.py   reads over periods: the sessions' keys, a period's calls for an export, the sessions of a range
machines.py  reads for sharing between machines: this machine's calls and sessions, the other machines' files
"""

from .queries import (
    ALL_TIME,
    BUCKETS_PER_QUERY,
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
from .schema import SCHEMA_VERSION, LedgerBusy, LedgerError, LedgerFull, LedgerReadOnly, LedgerUnavailable
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
    "SessionRow",
    "Sums",
    "Usage",
]
