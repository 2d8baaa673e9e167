"""What one refresh did, in figures."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RefreshStats:
    folders: int = 0
    files_stat: int = 0
    files_read: int = 0
    bytes_read: int = 0
    calls_upserted: int = 0
    errors: dict[str, str] = field(default_factory=dict)  # files that failed in this refresh
    removed_sessions: int = 0
    seconds: float = 0.0
    pending: int = 0  # changed sessions left unread for a later refresh (see `Ledger.refresh`'s budget)

    def add(self, other: RefreshStats) -> None:
        """Another source's refresh, counted in with this one."""
        for name in (
            "folders",
            "files_stat",
            "files_read",
            "bytes_read",
            "calls_upserted",
            "removed_sessions",
            "pending",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.errors.update(other.errors)
        self.seconds += other.seconds

    @property
    def changed(self) -> bool:
        return bool(self.files_read or self.removed_sessions)
