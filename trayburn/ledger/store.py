"""The ledger: SQLite holding every call seen in the sources' files, each counted once. Never knows a source's
layout: it is given `Source`s, which keep their own listings and watches.

`refresh()` stats every file and re-reads only those whose checkpoint (size, mtime_ns, inode, ctime_ns)
changed; a change time moved by a change of the inode's metadata alone (chmod, chown, a hard link) is stored
unread (files.metadata_only). Calls are upserted, never deleted: a call that vanishes from a rewritten file, or a
session whose folder is removed, keeps counting for the day it happened (the money was spent).
"""

from __future__ import annotations

import gc
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING

from ..files import Checkpoint
from ..sources.base import Digested, Known, Plan, Seen, Source
from . import backups
from .queries import MachineQueries, PeriodQueries, Queries
from .schema import (
    LedgerDamaged,
    LedgerError,
    LedgerUnavailable,
    busy_error,
    connect,
    integrity_problem,
    is_busy,
    open_ledger,
    rollback,
    unavailable,
    verdict,
)
from .writer import RefreshStats, StorableIds, text

if TYPE_CHECKING:  # (salvage.py is loaded only where a ledger was or is damaged)
    from . import salvage
    from .changes import Changes, Tracker

log = logging.getLogger(__name__)

IN_MEMORY = (-1, -1)  # the identity of a copy in memory, kept while no file at the path can be opened
ENDED = ("completed", "failed", "cancelled")  # a session with this status adds no files until its manifest changes
SLICE_S = 1.0  # a long ingest commits about this often: killed mid-way, it resumes from the last commit
CHECKPOINT_AFTER_BYTES = 32 * 10**6  # after reading this much, the write-ahead log is checkpointed and truncated
BACKUP_AFTER_S = 3600.0  # a process open this long looks for the day's backup after a refresh (at most this often)
# SQLite's page cache while a refresh writes (its own default: 2 MiB), given back after it: calls go into an index by
# their key, which is random, so a small cache reads the same pages back again and again (a cold ingest of 20,000
# sessions: about 12 % of its CPU at 2 MiB; 8 MiB holds most of that index, for 7 MiB more at its peak).
WRITE_CACHE_KIB = 8 * 1024
# The write-ahead log's size (in pages) at which a commit copies it into the ledger file, while a refresh writes
# (SQLite's default, 1,000 pages, given back after it). Each slice of a long ingest rewrites most of the key index's
# pages (the keys are random); copied in after every commit, each was written twice a slice. At 64 MiB they are
# copied in once every few slices: a cold ingest of 20,000 sessions wrote ~620 MB for a 120 MB ledger, ~480 MB now.
# (The log is truncated after a big ingest, `CHECKPOINT_AFTER_BYTES`; only a long ingest ever fills it this far.)
WRITE_AUTOCHECKPOINT_PAGES = 16384


class Ledger(Queries, PeriodQueries, MachineQueries):
    def __init__(
        self,
        path: Path,
        max_file_bytes: int = 256 * 10**6,
        busy_timeout_s: float = 30,
        wall_ns: Callable[[], int] = time.time_ns,
        slice_s: float = SLICE_S,
    ):
        """`busy_timeout_s`: how long to wait for another process's lock before raising LedgerBusy.
        `wall_ns`: the epoch ns a file is read at, against its mtime (the racy-timestamp rule, `writer.RACY_NS`).
        `slice_s`: how long one write transaction of a long ingest runs before it commits."""
        self.path = Path(path)
        self.max_file_bytes = max_file_bytes
        self.busy_timeout_s = busy_timeout_s
        self.wall_ns, self.slice_s = wall_ns, slice_s
        opened = open_ledger(self.path, busy_timeout_s)
        self.db = opened.db
        self.notice = opened.notice  # set when it had to be rebuilt, or was found deleted or replaced
        self.fault: LedgerUnavailable | None = opened.fault  # set while the ledger cannot be written
        self._writable = opened.fault is None
        self._damaged = False  # a query met a damaged page: reopened (checked, rebuilt) at the next refresh
        self._identity = _identity(self.path)  # (st_dev, st_ino) of the file this connection has open
        self._lock = threading.RLock()  # one connection shared by threads (poller, menu, window): one at a time
        self._known_memo: tuple[int, dict[str, Known]] | None = None  # (data_version, files) between refreshes
        self._ended_memo: tuple[int, set[str]] | None = None  # (data_version, ids of ended sessions)
        # a long ingest's sessions of one feed (id -> start), from one slice to the next: (feed, data_version, them)
        self._sessions_memo: tuple[str, int, dict[str, int | None]] | None = None
        self.backup_after_s = BACKUP_AFTER_S
        self._backup_looked = time.monotonic()
        self._tracker: Tracker | None = None  # what the writes changed between two `changes()` (changes.py)

    def close(self) -> None:
        """The day's backup first, if due (a command's output is out by then), then the connection closed."""
        with self._lock:
            self.backup_if_due()
            self.db.close()  # (the last connection to close checkpoints the write-ahead log into the file)

    def backup_if_due(self) -> Path | None:
        """The day's checked backup beside the ledger (`backups.daily_backup`: one folder listing when not due; about
        0.35 s at 5,000 sessions when due), made at close, after `check_integrity` found the ledger sound, and
        after a refresh of a process open for `backup_after_s` (the tray): never at open, so never before a
        command's figures. Never raises (a backup that fails is logged)."""
        with self._lock:
            self._backup_looked = time.monotonic()
            if not self._writable or self._damaged or self._identity == IN_MEMORY:
                return None
            try:
                return backups.daily_backup(self.db, self.path)
            except (OSError, sqlite3.Error) as exc:
                log.warning("no backup of %s: %s", self.path, exc)
                return None

    def check_integrity(self) -> str | None:
        """SQLite's full integrity check of the open ledger: None when it is sound. When it is not, the ledger
        is moved aside and rebuilt now (the rows it still yields kept, `notice` set) and the reason returned."""
        with self._lock:
            try:
                problem = integrity_problem(self.db)
            except sqlite3.DatabaseError as exc:
                if verdict(exc) != "corrupt":
                    raise
                problem = str(exc)
            if problem is not None:
                log.warning("the ledger %s failed SQLite's integrity check: %s", self.path, problem)
                self._damaged = True
                self._check_file()
            else:
                self.backup_if_due()
            return problem

    def repair(self) -> None:
        """After a query met a damaged page (LedgerDamaged): the ledger checked now and, failing, moved aside and
        rebuilt (`notice` says what came back and from where). Raises LedgerBusy or LedgerUnavailable when it
        cannot be done now."""
        with self._lock, self._busy_raises():
            self._damaged = True
            self._check_file()

    def changes(self) -> Changes | None:
        """What the writes changed in the figures' rows since the last call: the sessions and the earliest call time
        (changes.py). None: unknown (the first call, another process wrote since, the ledger was opened again):
        everything may have changed."""
        from .changes import Tracker  # (only a process that keeps figures between refreshes asks: the tray)

        with self._lock:
            if self._tracker is None:
                self._tracker = Tracker()
            try:
                return self._tracker.take(self.db)
            except sqlite3.Error:  # (a temporary table refused: read-only, a full disk) unknown, as untracked
                return None

    def rebuilt(self) -> salvage.Rebuilt | None:
        """The last rebuild of this ledger and what it held that is still not back (None: never rebuilt)."""
        from . import salvage  # (as below: the salvage is loaded only where a ledger was or is damaged)

        with self._lock, self._busy_raises():
            return salvage.rebuilt(self.db, self.path)

    def rebuild_seen(self) -> None:
        """`doctor` showed the last rebuild: no longer a problem."""
        from . import salvage

        salvage.mark_seen(self.path)

    def backups(self) -> dict:
        """For `doctor`: the backups beside the ledger (`backups.report`)."""
        return backups.report(self.path)

    @property
    def read_only(self) -> bool:
        """Opened only for reading (a full disk, a file that cannot be written): figures are stale."""
        return not self._writable

    # ---- the file under us ----------------------------------------------------------------------

    def _check_file(self) -> None:
        """Reopen when the ledger cannot be written (perhaps it can now), or when the file at `path` is
        not the one we have open (deleted, or replaced by another): everything ours is copied into
        the file now there (created if none), so no history is lost. Raises LedgerUnavailable."""
        now = _identity(self.path)
        if now == self._identity and self._writable and not self._damaged:
            return
        if self._damaged:
            self._reopen_damaged()
            return
        if now != self._identity and self._identity is not None and self._writable:
            self._reattach(now)
            return
        opened = open_ledger(self.path, self.busy_timeout_s)  # read-only: try again to open it for writing
        if opened.fault is not None:
            opened.db.close()
            raise opened.fault
        self.db.close()
        self.db, self.fault, self._identity, self._writable = opened.db, None, _identity(self.path), True
        self._damaged = False
        self.notice = opened.notice or self.notice
        self._forget()

    def _reopen_damaged(self) -> None:
        """Opened again, so checked (and if it fails, moved aside and rebuilt: schema.open_ledger). Our
        connection is let go of first: one still open on a file moved aside could remove the new one's WAL."""
        self.db.close()
        try:
            opened = open_ledger(self.path, self.busy_timeout_s, check=True)
        except BaseException:
            self.db = connect(self.path, self.busy_timeout_s)  # served as it is until a reopen succeeds
            raise
        self.db, self.fault, self._identity = opened.db, opened.fault, _identity(self.path)
        self._writable, self._damaged = opened.fault is None, False
        self.notice = opened.notice or self.notice
        self._forget()
        if opened.fault is not None:
            raise opened.fault

    def _reattach(self, now: tuple[int, int] | None) -> None:
        """Our connection is let go of first (it removes a WAL of ours still at the path, which the new
        file must not take for its own), after copying what it holds into memory. Until a file at the
        path can be opened, the refreshes write into that copy; each tries again."""

        snapshot = connect(":memory:", self.busy_timeout_s)
        self.db.backup(snapshot)
        self.db.close()
        self.db, self._identity = snapshot, IN_MEMORY
        opened = open_ledger(self.path, self.busy_timeout_s)
        if opened.fault is not None:
            opened.db.close()
            raise opened.fault
        self.db, self.fault, self._identity, self._writable = opened.db, None, _identity(self.path), True
        self._damaged = False
        from . import salvage

        try:
            with self._busy_raises():
                got = salvage.merge(snapshot, self.db, keep_checkpoints=True)
        except BaseException:
            self.db.close()
            self.db, self._identity = snapshot, IN_MEMORY
            raise
        snapshot.close()
        what = "deleted" if now is None else "replaced by another file"
        held = f"; the {got.calls} calls it held were copied into the ledger now there" if got else ""
        self.notice = f"the ledger {self.path} was {what} while trayburn ran{held}"
        self._forget()

    def forget_files(self) -> None:
        """Drop what this process keeps of the files table (read again at the next refresh)."""
        with self._lock:
            self._forget()

    def _forget(self) -> None:
        self._known_memo = self._ended_memo = None

    # ---- refresh -------------------------------------------------------------------------------

    def refresh(self, source: Source, since_ms: int | None = None, budget_s: float | None = None) -> RefreshStats:
        """Bring the ledger up to date with a source (the source keeps its own listings and watches).

        With neither argument, completely. `since_ms`: every session whose files changed since that moment
        is read (the figures from then on are then exact), and the rest of what changed only for
        `budget_s` more seconds (None or 0: none; above 0, at least one session); `stats.pending` says how
        many were left for later. Work is committed every `slice_s`, so an interrupted ingest resumes.
        Thread-safe; other processes wait for the write lock (SQLite's) up to `busy_timeout_s`, then LedgerBusy."""
        complete = since_ms is None and budget_s is None
        ends = None if complete else time.perf_counter() + (budget_s or 0.0)
        since_ns = None if since_ms is None else since_ms * 10**6
        with self._lock:
            try:
                stats = self._refresh_checked(source, since_ns, ends, budget_s)
            except LedgerError:
                if not self._damaged:
                    raise
                # a damaged page met on the way: rebuilt now (the next _check_file), and the refresh done again
                stats = self._refresh_checked(source, since_ns, ends, budget_s)
            if time.monotonic() - self._backup_looked >= self.backup_after_s:
                self.backup_if_due()
            return stats

    def _refresh_checked(
        self, source: Source, since_ns: int | None, ends: float | None, budget_s: float | None
    ) -> RefreshStats:
        with self._busy_raises(), _collector_paused():
            self._check_file()
            stats = self._refresh(source, since_ns, ends, budget_s)
            self.fault = None
            return stats

    @contextmanager
    def _busy_raises(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            if is_busy(exc):
                raise busy_error(self.path, self.busy_timeout_s, exc) from exc
            kind = verdict(exc)
            if kind in ("full", "io", "read_only"):  # the ledger is left as it is, still readable
                self.fault = unavailable(self.path, exc)
                raise self.fault from exc
            if kind == "corrupt":  # met by a query: `repair` (or the next refresh) checks it and rebuilds it
                self._damaged = True
                raise LedgerDamaged(
                    f"the ledger {self.path} is damaged ({exc}); trayburn checks it and rebuilds it from its pages,"
                    " its backups and Cline's files"
                ) from exc
            raise

    def _refresh(
        self, source: Source, since_ns: int | None, ends: float | None, budget_s: float | None
    ) -> RefreshStats:
        """Write transactions of about SLICE_S each until nothing is left or `ends` (perf_counter) passed."""
        started = time.perf_counter()
        stats = RefreshStats()
        seen = source.scan(self._ended)
        digest = stored = None
        unstored = False  # a source with a digest but none stored yet: store one even if nothing is written
        if seen.listed and not self._known_is_fresh():  # (else `needs_work` on it costs less than a digest)
            digest = _digest(source)
            stored = self._stored_digest(source.feed) if digest is not None else None
            if stored is not None and stored == digest:  # as when the ledger last had nothing left to do
                return self._refreshed(stats, seen, started)
        elif seen.listed and isinstance(source, Digested):  # `known` was read for another source of this process
            unstored = self._stored_digest(source.feed) is None
        known = self._known_unless_unchanged()
        faults: dict[str, str] = {}  # sessions that raised in this refresh: skipped in its later slices
        wrote = False
        cache = None  # the page cache's size before this refresh wrote
        pages = 0  # and the log's size that makes a commit copy it in
        try:
            while seen.listed and source.needs_work(known):
                if cache is None:
                    cache = self.db.execute("PRAGMA cache_size").fetchone()[0]
                    self.db.execute(f"PRAGMA cache_size={-WRITE_CACHE_KIB}")
                    pages = self.db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
                    self.db.execute(f"PRAGMA wal_autocheckpoint={WRITE_AUTOCHECKPOINT_PAGES}")
                now = time.perf_counter()
                until = now + self.slice_s if ends is None else min(now + self.slice_s, ends)
                plan = Plan(since_ns, until, least=1 if budget_s or ends is None else 0, faults=faults)
                known = self._write(source, plan, stats)
                wrote = True
                stats.pending = plan.deferred
                since_ns = None  # what had to be read now was read in the first slice
                if not plan.deferred or (ends is not None and time.perf_counter() >= ends):
                    break
        finally:
            self._sessions_memo = None  # (kept only from one slice to the next)
            if cache is not None:  # (pages over the size are freed)
                self.db.execute(f"PRAGMA cache_size={cache}")
                self.db.execute(f"PRAGMA wal_autocheckpoint={pages}")
        if stats.bytes_read >= CHECKPOINT_AFTER_BYTES:  # a big ingest: give the write-ahead log back
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        if seen.listed and (wrote or digest is not None or unstored) and not stats.pending:
            self._store_digest(source, digest, stored, known)
        return self._refreshed(stats, seen, started)

    @staticmethod
    def _refreshed(stats: RefreshStats, seen: Seen, started: float) -> RefreshStats:
        stats.folders = seen.sessions
        stats.files_stat = seen.files
        stats.errors = {**seen.problems, **stats.errors}
        stats.seconds = time.perf_counter() - started
        return stats

    def _stored_digest(self, feed: str) -> str | None:
        try:
            row = self.db.execute("SELECT digest FROM scans WHERE feed=?", (feed,)).fetchone()
        except sqlite3.OperationalError:  # no such table: a read-only ledger of an older trayburn
            return None
        return row[0] if row else None

    def _store_digest(self, source: Source, digest: str | None, stored: str | None, known: dict[str, Known]) -> None:
        """The scan's digest, if the ledger has nothing left to do with it and no other connection wrote since
        `known` was read (schema.SCANS: a write to the files table drops it again). Best effort: without it
        the next refresh only reads `known` again."""
        if not self._writable or self._known_memo is None or self._known_memo[1] is not known:
            return
        if not isinstance(source, Digested) or source.needs_work(known) or not source.trusts_digest(known):
            return
        digest = digest or _digest(source)
        if digest is None or digest == (stored or self._stored_digest(source.feed)):
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if self._data_version() == self._known_memo[0]:
                    self.db.execute("INSERT OR REPLACE INTO scans(feed, digest) VALUES(?, ?)", (source.feed, digest))
                self.db.execute("COMMIT")
            except BaseException:
                rollback(self.db)
                raise
        except sqlite3.Error as exc:
            log.debug("scan digest not stored: %s", exc)

    def _write(self, source: Source, plan: Plan, stats: RefreshStats) -> dict[str, Known]:
        """One write transaction of a refresh (done again without a session that raised: `Refresh.guard`);
        what the ledger knows of its files after it."""
        from .writer import Refresh, SessionFault  # (a refresh that finds nothing changed never writes)

        while True:
            before = replace(stats, errors=dict(stats.errors))
            self.db.execute("BEGIN IMMEDIATE")
            try:
                known = self._known_unless_unchanged()  # re-read only if another connection wrote meanwhile
                version, self._known_memo, self._ended_memo = self._data_version(), None, None
                memo = self._sessions_memo  # (the last slice's, if no other connection wrote since)
                sessions = memo[2] if memo is not None and memo[:2] == (source.feed, version) else None
                refresh = Refresh(
                    self.db, known, stats, self.max_file_bytes, source.feed, source.origin, plan, self.wall_ns, sessions
                )
                source.ingest(StorableIds(refresh))
                refresh.finish()
                self.db.execute("COMMIT")
                break
            except SessionFault as fault:  # done again, that session skipped (and recorded as a problem)
                rollback(self.db)
                plan.faults[fault.sid] = fault.why
                plan.deferred = 0
                stats.__dict__.update(before.__dict__)
            except BaseException:
                rollback(self.db)
                raise
        # Brought up to date in place (our own commit leaves data_version as it was): the rows this transaction
        # added with a good read, or gave a new change time unread, as it built them (sharing the scan's strings
        # and checkpoints), the others it wrote read back one by one (a full reload would hold two copies of the
        # memo at once).
        self._sessions_memo = (source.feed, version, refresh.carried())
        added, adopted, written = refresh.state.added, refresh.state.adopted, refresh.state.written
        others = [p for p in written if p not in added and p not in adopted]
        if len(others) >= max(len(known) // 4, 1000):  # most rows rewritten (a copied folder): read them all
            return self._known_unless_unchanged()
        known.update(added)
        known.update(adopted)
        known.update(self._known(others))
        self._known_memo = (version, known)
        return known

    def _data_version(self) -> int:
        return self.db.execute("PRAGMA data_version").fetchone()[0]

    def _ended(self) -> set[str]:
        """Ids of the sessions whose status is ended (their folders are not listed at every refresh)."""
        version = self._data_version()
        if self._ended_memo is None or self._ended_memo[0] != version:
            marks = ",".join("?" * len(ENDED))
            ids = {r[0] for r in self.db.execute(f"SELECT id FROM sessions WHERE status IN ({marks})", ENDED)}
            self._ended_memo = (version, ids)
        return self._ended_memo[1]

    def _known_is_fresh(self) -> bool:
        return self._known_memo is not None and self._known_memo[0] == self._data_version()

    def _known_unless_unchanged(self) -> dict[str, Known]:
        """`_known()`, reused while no connection has written the ledger since (PRAGMA data_version
        changes when another connection commits; our own commits clear the memo)."""
        version = self._data_version()
        if self._known_memo is None or self._known_memo[0] != version:
            self._known_memo = (version, self._known())
        return self._known_memo[1]

    def _known(self, paths: list[str] | None = None) -> dict[str, Known]:
        """What the ledger knows of every file (or of these paths)."""
        sql = (
            "SELECT path, size, mtime_ns, inode, bad_size, bad_mtime_ns, bad_inode, gone, kind, session_id, id, origin,"
            " feed, ctime_ns, bad_ctime_ns, meta FROM files"
        )
        rows: Iterable[tuple]
        if paths is None:
            rows = self.db.execute(sql)  # row by row: never every row at once beside the dict
        else:
            rows = [row for path in paths for row in self.db.execute(sql + " WHERE path=?", (path,))]
        return {text(r[0]) or "": _known_row(r) for r in rows}

    # ---- reads ---------------------------------------------------------------------------------

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._lock, self._busy_raises():
            return self.db.execute(sql, params).fetchall()

    def query(self, sql: str, params: tuple | dict = ()) -> list[tuple]:
        """Rows of any read, for tests and tools (trayburn's own code uses the typed methods of `Queries`);
        never in the middle of a refresh (its figures would be half-settled)."""
        with self._lock, self._busy_raises():
            return self.db.execute(sql, params).fetchall()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector off for one refresh, back on after it as it was: the scan and the slices make many
    short-lived objects, freed as they go, which no cycle holds (and the scan's and the memo's long-lived ones); at
    20,000 sessions its passes over them cost ~0.3 s of a cold ingest's CPU (bench/bench_cold.py)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _digest(source: Source) -> str | None:
    return source.digest() if isinstance(source, Digested) else None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _known_row(r: tuple) -> Known:
    """A files row as `Known`; its repeated strings shared (a memo of 40,000 files then holds one copy each)."""
    return Known(
        Checkpoint(r[1], r[2], r[3], r[13]) if r[1] is not None else None,
        Checkpoint(r[4], r[5], r[6], r[14]) if r[4] is not None else None,
        bool(r[7]),
        intern(r[8]),
        intern(r[9]),
        r[10],
        r[11] if r[11] is None else intern(r[11]),
        intern(r[12]),
        r[15] if r[15] is None else intern(r[15]),  # (a few texts for every file: "100644 1 1000 1000")
    )
