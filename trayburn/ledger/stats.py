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

    @property
    def changed(self) -> bool:
        return bool(self.files_read or self.removed_sessions)
