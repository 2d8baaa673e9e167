"""Test helpers for sharing: a "machine" is its own sessions folder, state folder and settings file, all
pointing to one shared sync folder. Engines run in this process or, where it matters, as the real CLI
in a process of their own."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .corpus import CORPUS, sessions_of

SESSION_IDS = sorted(p.name for p in sessions_of(CORPUS).iterdir())


@dataclass
class Box:
    name: str
    root: Path
    sync: Path

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def config(self) -> Path:
        return self.root / "settings.toml"

    def configure(self, **extra: object) -> None:
        values = {"sessions_dir": str(self.sessions), "sync_dir": str(self.sync), "machine_name": self.name, **extra}
        lines = [f"{k} = {json.dumps(v)}" for k, v in values.items() if v is not None]
        self.config.write_text("\n".join(lines) + "\n")

    def copy_sessions(self, ids: list[str]) -> None:
        self.sessions.mkdir(parents=True, exist_ok=True)
        for sid in ids:
            shutil.copytree(sessions_of(CORPUS) / sid, self.sessions / sid)

    def engine(self):
        from trayburn.engine import Engine

        return Engine(self.config, self.state, env={"HOME": str(self.root)})

    def cli(self, *args: str) -> dict:
        """The real CLI in its own process, as this machine."""
        argv = [sys.executable, "-m", "trayburn", *args, "--json", "--config", str(self.config)]
        argv += ["--state-dir", str(self.state)]
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=120,
            env={"HOME": str(self.root), "TRAYBURN_LOG_DIR": str(self.root / "log"), "PATH": ""},
        )
        assert done.returncode in (0, 1), done.stderr
        return json.loads(done.stdout)

    def machine_id(self) -> str:
        return json.loads((self.state / "machine.json").read_text())["id"]

    def file(self) -> Path:
        return self.sync / "trayburn" / "machines" / f"{self.machine_id()}.json.gz"


def boxes(tmp_path: Path, *names: str) -> list[Box]:
    sync = tmp_path / "Sync"
    sync.mkdir(exist_ok=True)
    out = []
    for name in names:
        box = Box(name, tmp_path / name, sync)
        box.sessions.mkdir(parents=True)
        box.configure()
        out.append(box)
    return out
