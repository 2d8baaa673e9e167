"""The ledger's reads for sharing between machines (`trayburn/sync`), mixed into `Ledger` like `Queries`:
this machine's sessions and calls as they leave for its machine file, the other machines' files held."""

from __future__ import annotations

from typing import NamedTuple

from .queries import SessionRow


class ExportCall(NamedTuple):
    """One of this machine's calls as it leaves for the machine file."""

    key: str
    ts_ms: int
    model: str | None
    provider: str | None
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None
    session_id: str
    agent: str | None


class MachineFile(NamedTuple):
    """Another machine's file as the ledger last saw it (kept when the file is gone)."""

    origin: str
    path: str
    name: str | None  # the machine's name in its file (stored as the files row's `agent`)
    gone: bool
    error: str | None
    mtime_ns: int | None


def _earlier(a: tuple, b: tuple) -> bool:
    """Row a's session started before b's (unknown starts last), then by session id, then by row id."""
    return (a[11] is None, a[11] or 0, a[9], a[12]) < (b[11] is None, b[11] or 0, b[9], b[12])


class MachineQueries:
    """Mixed into `Ledger` beside `Queries`."""

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        raise NotImplementedError

    def local_sessions(self) -> list[SessionRow]:
        """This machine's sessions (removed ones included: their calls still count)."""
        rows = self._rows(
            "SELECT id, started_ms, ended_ms, status, title, prompt, cwd, workspace_root, model, provider,"
            " removed, folder, source, origin FROM sessions WHERE origin IS NULL ORDER BY id"
        )
        return [
            SessionRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]), r[11], r[12], r[13])
            for r in rows
        ]

    def local_calls(self) -> list[ExportCall]:
        """This machine's calls, one per key: the copy in its earliest-started session (as `counted` would
        choose among this machine's rows alone), whether or not another machine's copy is counted here."""
        rows = self._rows(
            "SELECT c.key, c.ts_ms, c.model, c.provider, c.input, c.output, c.cache_read, c.cache_write, c.cost,"
            " c.session_id, c.agent, s.started_ms, c.id FROM calls c JOIN files f ON f.id = c.file_id"
            " LEFT JOIN sessions s ON s.id = c.session_id WHERE f.origin IS NULL"
        )  # ordered here, not by SQL: a sort of every call by key costs twice the query
        best: dict[str, tuple] = {}
        for r in rows:
            held = best.get(r[0])
            if held is None or _earlier(r, held):
                best[r[0]] = r
        return [ExportCall(*r[:11]) for r in best.values()]

    def counted_by_origin(self) -> dict[str | None, int]:
        """Counted calls, all time, by the machine whose session counts them (None: this one): each key once,
        so a call both here and in another machine's file is this machine's alone."""
        sql = "SELECT s.origin, COUNT(*) FROM calls c LEFT JOIN sessions s ON s.id = c.session_id WHERE c.counted=1"
        return {r[0]: r[1] for r in self._rows(sql + " GROUP BY 1")}

    def feed_sessions(self, feed: str) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM sessions WHERE feed=? AND removed=0", (feed,))]

    def machine_files(self) -> list[MachineFile]:
        rows = self._rows(
            "SELECT origin, path, agent, gone, error, mtime_ns FROM files WHERE kind='machine' AND origin IS NOT NULL"
            " ORDER BY origin, path"
        )
        return [MachineFile(r[0], r[1], r[2], bool(r[3]), r[4], r[5]) for r in rows]
