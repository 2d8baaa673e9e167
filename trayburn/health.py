"""What state trayburn's inputs are in, for `doctor` and the tray's problem line: the kind (`HealthKind`), the
`Health` record, and the sentence a person reads. Pure: it reads no file and no ledger (the engine gathers the
facts and passes them in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import paths, settings

# What state trayburn's inputs are in; the tray and `doctor` choose by this, never by the verdict's words.
HealthKind = Literal[
    "ok",
    "ledger_disk_full",  # the ledger cannot be written: the disk is full (figures as of the last refresh)
    "ledger_read_only",  # the ledger can be opened only for reading (permissions; figures are stale)
    "ledger_io",  # the ledger failed a read or write (an I/O error; figures are stale)
    "ledger_damaged",  # the ledger failed SQLite's integrity check (`check_integrity`): moved aside and rebuilt
    "ledger_rebuilt",  # the ledger was rebuilt and `doctor` has not shown it yet (what came back, what was lost)
    "settings_broken",  # the settings file does not parse: defaults are in use (see settings_problem)
    "override_missing",  # a setting or variable points to a folder that does not exist (see problem_level)
    "not_installed",  # no Cline folder at the default place, and no sessions folder
    "no_sessions_folder",  # the sessions folder does not exist yet (Cline has recorded no session)
    "sessions_not_a_folder",  # the sessions path exists but is a file
    "no_sessions",  # the sessions folder exists and holds none
    "file_problems",  # some files could not be read (see problems: path and reason); the rest is counted
    "sync_problems",  # sharing through sync_dir has a problem (doctor's, from `sync_health`); the rest is counted
]


@dataclass
class Health:
    """What `trayburn doctor` and the tray's problem line say."""

    kind: HealthKind
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
    problem_level: paths.Level | None = None  # for override_missing: the level whose override points nowhere
    settings_problem: settings.SettingsProblem | None = None  # for settings_broken: kind, message, line, key
    ledger_fault: str | None = None  # for ledger_*: what is wrong with the ledger (figures are stale meanwhile)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "ok": self.ok,
            "verdict": self.verdict,
            "levels": [
                {"name": lv.name, "path": str(lv.path), "origin": lv.origin, "source": lv.source(), "exists": lv.exists}
                for lv in self.levels
            ],
            "config": {
                "path": str(self.config_path),
                "error": self.config_error,
                "problem": self.settings_problem._asdict() if self.settings_problem else None,
                "warnings": self.config_warnings,
            },
            "problem_level": self.problem_level.name if self.problem_level else None,
            "sessions": self.sessions,
            "removed_sessions": self.removed_sessions,
            "problems": [{"path": p, "reason": r} for p, r in self.problems],
            "being_written": [{"path": p, "reason": r} for p, r in self.settling],
            "ledger": {"path": str(self.ledger_path), "notice": self.ledger_notice, "fault": self.ledger_fault},
            **self.extra,
        }


def kind_of(
    fault: str | None,
    damaged: bool,
    settings_broken: bool,
    levels: paths.Levels,
    editor_tasks: bool,
    sessions: int,
) -> tuple[HealthKind, paths.Level | None]:
    """The kind, first problem first, and for `override_missing` the level whose override points nowhere.
    `fault`: the ledger's fault kind (one of the ledger_* kinds), if any; `editor_tasks`: whether an editor app's
    sessions are held (they are data: the Cline CLI is optional then)."""
    if fault is not None:
        return fault, None  # type: ignore[return-value]  # one of the ledger_* kinds
    if damaged:
        return "ledger_damaged", None
    if settings_broken:
        return "settings_broken", None
    level = missing_override(levels)
    if level is not None:
        return "override_missing", level
    root, sess = levels.root, levels.sessions
    if sess.path.exists() and not sess.exists:
        return "sessions_not_a_folder", None
    if not sess.exists and not editor_tasks:
        if not root.exists and root.origin == "default" and not sess.path.exists():
            return "not_installed", None
        return "no_sessions_folder", None
    return ("ok" if sessions else "no_sessions"), None


def missing_override(levels: paths.Levels) -> paths.Level | None:
    """An override (setting or variable) pointing nowhere, among the levels the sessions folder derives from."""
    used = [levels.sessions]
    while used[0].origin == "default" and used[0] is not levels.root:
        used.insert(0, levels.root if used[0] is levels.data else levels.data)
    sess = levels.sessions  # a sessions path that is a file is `sessions_not_a_folder`
    return next(
        (lv for lv in used if lv.origin != "default" and not (lv.path.exists() if lv is sess else lv.exists)), None
    )


def verdict(
    kind: HealthKind,
    level: paths.Level | None,
    sessions: int,
    levels: paths.Levels,
    config_path: Path,
    *,
    fault: str | None,
    integrity: str | None,
    notice: str | None,
    settings_error: str | None,
    apps: Sequence[tuple[str, int]],
    cli_sessions: int,
) -> str:
    """The sentence for a person (the tray and doctor choose by `kind`, not by these words). `apps`: (name, live
    sessions) of each editor app holding some; `cli_sessions`: the Cline CLI's live sessions."""
    sess = levels.sessions
    held = f"{sessions} session{'' if sessions == 1 else 's'} in {sess.path}"
    if kind.startswith("ledger_") and fault is not None:
        return f"The figures are stale: {fault}"
    if kind == "ledger_damaged":
        return f"The ledger failed SQLite's integrity check ({integrity}); {notice}"
    if kind == "file_problems":
        return f"{held}; some files could not be read (listed above), the rest is counted"
    if kind == "settings_broken":
        return f"The settings file is broken, defaults are in use: {settings_error}"
    if kind == "override_missing" and level is not None:
        who = f"The setting {level.name} in {config_path}" if level.origin == "settings" else level.variable
        return f"{who} points to {level.path}, which does not exist"
    if kind == "not_installed":
        return f"The Cline CLI is not installed (nothing at {levels.root.path})"
    if kind == "sessions_not_a_folder":
        return f"The sessions path {sess.path} is a file, not a folder"
    if kind == "no_sessions_folder":
        return f"The sessions folder {sess.path} does not exist yet: Cline has not recorded a session"
    if kind == "no_sessions":
        return f"The sessions folder {sess.path} exists but holds no sessions"
    if not apps:
        return f"OK: {held}"
    held_apps = ", ".join(f"{n} of {name}" for name, n in apps)
    if sess.exists:
        where = f"{cli_sessions} session{'' if cli_sessions == 1 else 's'} in {sess.path}"
    elif not levels.root.exists:
        where = f"the Cline CLI is not installed (nothing at {levels.root.path})"
    else:
        where = f"no Cline CLI sessions folder yet ({sess.path})"
    return f"OK: editor tasks ({held_apps}); {where}"
