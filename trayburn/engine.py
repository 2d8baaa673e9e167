"""The engine: settings + Cline's folders + the ledger + prices, behind one object.

The CLI, the tray and the summary window all use this; none of it imports a GUI toolkit.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from . import paths, report
from . import settings as st
from .cline.files import stat_file
from .ledger import RETRY_RECENT_NS, Ledger, RefreshStats
from .pricing import PriceBook

log = logging.getLogger(__name__)


@dataclass
class Health:
    """What `trayburn doctor` and the tray's problem line say."""

    levels: paths.Levels
    config_path: Path
    config_error: str | None
    config_warnings: list[str]
    sessions: int
    removed_sessions: int
    problems: list[tuple[str, str]]  # (path, reason)
    verdict: str
    ok: bool
    ledger_path: Path
    ledger_notice: str | None = None
    settling: list[tuple[str, str]] = field(default_factory=list)  # failed within the last minute
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "ok": self.ok,
            "verdict": self.verdict,
            "levels": [
                {"name": lv.name, "path": str(lv.path), "origin": lv.origin, "source": lv.source(), "exists": lv.exists}
                for lv in self.levels
            ],
            "config": {"path": str(self.config_path), "error": self.config_error, "warnings": self.config_warnings},
            "sessions": self.sessions,
            "removed_sessions": self.removed_sessions,
            "problems": [{"path": p, "reason": r} for p, r in self.problems],
            "being_written": [{"path": p, "reason": r} for p, r in self.settling],
            "ledger": {"path": str(self.ledger_path), "notice": self.ledger_notice},
            **self.extra,
        }


class Engine:
    def __init__(
        self,
        config: str | os.PathLike | None = None,
        state_dir: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None,
        busy_timeout_s: float = 30,
    ):
        """`busy_timeout_s`: how long a refresh waits for another process's lock on the ledger before it
        raises LedgerBusy (the summary window uses a short one and retries at its next refresh)."""
        self.env = os.environ if env is None else env
        self.config_path = paths.config_file(config, self.env)
        self.state_dir = paths.state_dir(state_dir, self.env)
        self._config_stamp: tuple | None = None
        self.last_refresh: RefreshStats | None = None
        self.load_settings()
        self.ledger = Ledger(self.state_dir / "ledger.db", self.settings.max_file_mb * 10**6, busy_timeout_s)

    # ---- settings and folders ------------------------------------------------------------------

    def load_settings(self) -> None:
        self.loaded = st.load(self.config_path)
        self.settings = self.loaded.settings
        self.levels = paths.resolve_levels(
            self.settings.cline_dir, self.settings.data_dir, self.settings.sessions_dir, self.env
        )
        self.book = PriceBook(self.settings.prices, self.settings.aliases)
        self._config_stamp = _stamp(self.config_path)
        for warning in self.loaded.warnings:
            log.warning(warning)
        if self.loaded.error:
            log.error(self.loaded.error)

    def reload_if_changed(self) -> bool:
        """Pick up edits to the settings file (by the menu or by hand). True if it changed."""
        if _stamp(self.config_path) == self._config_stamp:
            return False
        self.load_settings()
        self.ledger.max_file_bytes = self.settings.max_file_mb * 10**6
        return True

    def update_setting(self, key: str, value: str | None) -> None:
        st.update(self.config_path, key, value)
        self.reload_if_changed()

    # ---- refresh --------------------------------------------------------------------------------

    def refresh(self) -> RefreshStats:
        time.tzset() if hasattr(time, "tzset") else None  # the time zone may have changed
        self.reload_if_changed()
        sessions = self.levels.sessions.path
        if sessions.is_dir():
            self.last_refresh = self.ledger.refresh(sessions)
        else:
            self.last_refresh = RefreshStats()  # the verdict says so; it is not an unreadable file
        return self.last_refresh

    # ---- figures --------------------------------------------------------------------------------

    def day(self, day: date | None = None) -> report.DayReport:
        return report.day_report(self.ledger, self.book, day or report.now_date())

    def hourly(self, day: date | None = None) -> list[float]:
        return report.hourly_costs(self.ledger, self.book, day or report.now_date())

    def sessions(self, since: date | None, until: date | None) -> list[report.SessionSummary]:
        from . import session_list  # two grouped queries, not two per session as report.sessions_report

        return session_list.sessions(self.ledger, self.book, since, until)

    def session(self, sid: str) -> report.SessionDetail | None:
        return report.session_detail(self.ledger, self.book, sid)

    def period(self, month: bool = False) -> report.Totals:
        """This week (Monday on) or this month, to the end of today."""
        today = report.now_date()
        first = today.replace(day=1) if month else today - timedelta(days=today.weekday())
        start = report.local_midnight_ms(first)
        return report.totals_between(self.ledger, self.book, start, report.day_bounds(today)[1])

    def history(self, period, by: str = "day"):
        """A period's figures by day, week, month, project, model, session or source (history.HistoryReport)."""
        from . import history

        return history.report(self.ledger, self.book, period, by)

    def overview(self, period):
        """A period by day, project, model and source from one read (the window's period view)."""
        from . import history

        return history.overview(self.ledger, self.book, period)

    def money(self):
        """How amounts are shown: the settings' currency and rate, the locale's format (money.Money)."""
        from . import money

        return money.from_settings(self.settings, self.env)

    def last_hour(self) -> report.Totals:
        now = report.utc_now_ms()
        return report.totals_between(self.ledger, self.book, now - 3600_000, now + 1)

    # ---- health ---------------------------------------------------------------------------------

    def health(self) -> Health:
        counts = self.ledger.query("SELECT SUM(removed=0), SUM(removed=1) FROM sessions")[0]
        live, removed = counts[0] or 0, counts[1] or 0
        # A file that failed within the last minute was most likely caught mid-write (normal: Cline
        # rewrites in place); it is retried at every refresh and reported only if it stays broken.
        settling = time.time_ns() - RETRY_RECENT_NS
        rows = self.ledger.problems()
        problems = [(p, r) for p, r, mtime in rows if mtime is None or mtime < settling]
        recent = [(p, r) for p, r, mtime in rows if mtime is not None and mtime >= settling]
        if self.last_refresh:
            known = {p for p, _, _ in rows}
            problems += [(p, r) for p, r in self.last_refresh.errors.items() if p not in known]
        verdict, ok = self._verdict(live)
        return Health(
            self.levels,
            self.config_path,
            self.loaded.error,
            self.loaded.warnings,
            live,
            removed,
            sorted(problems),
            verdict,
            ok,
            self.ledger.path,
            self.ledger.notice,
            settling=recent,
        )

    def _verdict(self, sessions: int) -> tuple[str, bool]:
        if self.loaded.error:
            return f"The settings file is broken, defaults are in use: {self.loaded.error}", False
        level = self._missing_override()
        if level is not None:
            who = f"The setting {level.name} in {self.config_path}" if level.origin == "settings" else level.variable
            return f"{who} points to {level.path}, which does not exist", False
        root, sess = self.levels.root, self.levels.sessions
        if not root.exists and root.origin == "default" and not sess.exists:
            return f"The Cline CLI is not installed (nothing at {root.path})", False
        if not sess.exists:
            return f"The sessions folder {sess.path} does not exist yet: Cline has not recorded a session", False
        if sessions == 0:
            return f"The sessions folder {sess.path} exists but holds no sessions", False
        return f"OK: {sessions} sessions in {sess.path}", True

    def _missing_override(self) -> paths.Level | None:
        """An override (setting or variable) pointing nowhere, among the levels the sessions folder derives from."""
        used = [self.levels.sessions]
        while used[0].origin == "default" and used[0] is not self.levels.root:
            used.insert(0, self.levels.root if used[0] is self.levels.data else self.levels.data)
        return next((lv for lv in used if lv.origin != "default" and not lv.exists), None)

    def close(self) -> None:
        self.ledger.close()


def _stamp(path: Path) -> tuple | None:
    try:
        return stat_file(str(path))
    except OSError:
        return None
