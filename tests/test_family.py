"""More of the family as editor apps, each one entry of `places.APPS`: Zoo Code (the Roo Code fork), IBM Bob and
the old Kilo CLI 0.x. Their places on each OS, the settings, remote servers, real-shaped task folders under a fake
HOME read by the engine, their names in `report --by source`, the menu's by-app line, export and doctor."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest
from helpers.corpus import cline_estimate
from helpers.taskfolders import TaskWriter, expected_calls, say, usage_say

from trayburn.sources.editor_tasks import places
from trayburn.sources.editor_tasks.places import BY_NAME

T0 = 1_764_600_000_000  # 2025-12-01
DAY = ["--since", "2025-12-01", "--until", "2025-12-01"]
ZOO_ID = "0199a8d2-6f3e-7c1a-9b2e-1f2a3b4c5d6e"  # Roo's task ids are UUIDv7


def run(capsys, *argv: str) -> str:
    from trayburn import cli

    assert cli.main(list(argv)) in (0, 1)
    return capsys.readouterr().out


def roo_task(t: int, i: int, o: int, cw: int, cr: int, cost: float | None) -> list[dict]:
    """Roo's shape (from 3.29.5: tokensIn includes the cache tokens), as Zoo, Bob and the old Kilo CLI write it."""
    usage = {"tokensIn": i, "tokensOut": o, "cacheWrites": cw, "cacheReads": cr}
    if cost is not None:
        usage["cost"] = cost
    return [say(t, "text", "build it"), say(t + 10, "api_req_started", json.dumps(usage))]


def writer(root: Path, task: str, ui: list[dict], model: str = "claude-sonnet-4-5") -> TaskWriter:
    w = TaskWriter(root, "roo")
    w.write(task, ui)
    w.api_history(task, [model])
    return w


# ---- places ------------------------------------------------------------------------------------------------


def test_places_on_each_os():
    zoo, bob, kcli = BY_NAME["zoo"], BY_NAME["bob"], BY_NAME["kilocli"]
    lin = dict((str(p), o) for o, p in places.default_places(zoo, {}, PurePosixPath("/home/me"), "linux"))
    assert lin["/home/me/.config/Code/User/globalStorage/zoocodeorganization.zoo-code"] == "VS Code (default)"
    assert lin["/home/me/.cursor-server/data/User/globalStorage/zoocodeorganization.zoo-code"].startswith("Cursor")
    assert "/home/me/.local/share/code-server/User/globalStorage/zoocodeorganization.zoo-code" in lin

    assert places.default_places(bob, {"XDG_CONFIG_HOME": "/cfg"}, PurePosixPath("/home/me"), "linux") == [
        ("IBM Bob (default)", PurePosixPath("/cfg/IBM Bob/User/globalStorage/ibm.bob-code")),
        ("IBM Bob (preview) (default)", PurePosixPath("/cfg/Bob-IDE/User/globalStorage/ibm.bob-code")),
    ]
    mac = places.default_places(bob, {}, PurePosixPath("/Users/me"), "darwin")
    assert [str(p) for _, p in mac] == [
        "/Users/me/Library/Application Support/IBM Bob/User/globalStorage/ibm.bob-code",
        "/Users/me/Library/Application Support/Bob-IDE/User/globalStorage/ibm.bob-code",
    ]
    win = places.default_places(bob, {"APPDATA": r"D:\Roaming"}, PureWindowsPath(r"C:\Users\me"), "win32")
    assert win[0][1] == PureWindowsPath(r"D:\Roaming\IBM Bob\User\globalStorage\ibm.bob-code")

    for platform, home in (("linux", PurePosixPath("/home/me")), ("darwin", PurePosixPath("/Users/me")),
                           ("win32", PureWindowsPath(r"C:\Users\me"))):  # fmt: skip
        assert places.default_places(kcli, {}, home, platform) == [
            ("Kilo CLI 0.x (default)", home / ".kilocode" / "cli" / "global")
        ]


def test_settings_and_custom_storage(tmp_path):
    home = tmp_path / "home"
    user = home / ".config" / "VSCodium" / "User"
    user.mkdir(parents=True)
    (user / "settings.json").write_text('{\n  // moved\n  "zoo-code.customStoragePath": "~/zoo-store",\n}')
    found = places.places(BY_NAME["zoo"], [], {}, home, "linux")
    assert places.Place("zoo", home / "zoo-store", "VSCodium: zoo-code.customStoragePath") in found
    given = places.places(BY_NAME["bob"], ["~/bob-copy"], {}, home, "linux")
    assert [(p.path, p.origin) for p in given] == [(home / "bob-copy", "settings (ibm_bob_dirs)")]
    from trayburn import settings

    assert {"zoo_code", "ibm_bob", "kilo_cli", "zoo_code_dirs", "ibm_bob_dirs", "kilo_cli_dirs"} <= set(settings.KEYS)


# ---- read by the engine, under a fake HOME ---------------------------------------------------------------------


def test_zoo_bob_and_the_kilo_cli_read_named_and_exported(capsys):
    """One task each, in their default places (Zoo Code on a remote server's storage): counted, each under its own
    name in `report --by source`, export and doctor; Bob's written cost is not taken as dollars."""
    home = Path.home()
    zui = roo_task(T0, 15220, 95, 420, 14800, 0.00744)
    writer(home / ".vscode-server/data/User/globalStorage/zoocodeorganization.zoo-code", ZOO_ID, zui)
    kui = roo_task(T0 + 60_000, 7000, 10, 0, 0, 0.02)
    writer(home / ".kilocode/cli/global", "k-" + ZOO_ID[2:], kui)
    bui = roo_task(T0 + 120_000, 24000, 600, 1000, 20000, 0.5)  # 0.5 of what: dollars, Bobcoins? not known
    bob = writer(home / ".config/IBM Bob/User/globalStorage/ibm.bob-code", "b-" + ZOO_ID[2:], bui)

    rows = {r["key"]: r for r in json.loads(run(capsys, "report", *DAY, "--by", "source", "--json"))["rows"]}
    assert set(rows) == {"zoo-code", "kilo-cli", "ibm-bob"}
    assert rows["zoo-code"]["cost_usd"] == pytest.approx(expected_calls("roo", zui)[5])
    assert rows["kilo-cli"]["cost_usd"] == pytest.approx(expected_calls("roo", kui)[5])
    from trayburn.pricing.book import PriceBook

    listed = cline_estimate(PriceBook(), "claude-sonnet-4-5", 24000, 600, 20000, 1000, T0 + 120_010)
    assert listed > 0
    assert rows["ibm-bob"]["cost_usd"] == pytest.approx(listed)  # list price from its tokens, not its 0.5
    assert rows["ibm-bob"]["estimated_cost_usd"] == pytest.approx(listed)

    exported = list(csv.DictReader(io.StringIO(run(capsys, "export", *DAY))))
    by_source = {r["source"]: r for r in exported}
    assert set(by_source) == {"zoo-code", "kilo-cli", "ibm-bob"}
    assert by_source["ibm-bob"]["estimated"] in ("true", "True", "1")

    doctor = run(capsys, "doctor")
    assert str(bob.root / "tasks") in doctor and "[IBM Bob (default)]" in doctor
    assert "Zoo Code" in doctor and "[VS Code Server (Remote-SSH, containers) (default)]" in doctor
    assert str(home / ".kilocode/cli/global/tasks") in doctor
    assert "cost fields total 0.5 over 1 task, unit not stated (Bobcoins or dollars" in doctor
    apps = {a["app"]: a for a in json.loads(run(capsys, "doctor", "--json"))["task_places"]}
    assert apps["bob"]["written_cost"]["total"] == 0.5 and "Bobcoin" in apps["bob"]["written_cost"]["unit"]
    assert "written_cost" not in apps["zoo"]


def test_bob_preview_build_and_each_app_turned_off(capsys):
    home = Path.home()
    bui = roo_task(T0, 5000, 10, 0, 4000, 0.01)
    writer(home / ".config/Bob-IDE/User/globalStorage/ibm.bob-code", "p1", bui)
    total = json.loads(run(capsys, "report", *DAY, "--json"))["total"]
    assert total["calls"] == expected_calls("roo", bui)[0] == 1
    run(capsys, "config", "set", "ibm_bob", "false")
    from trayburn.engine import Engine

    engine = Engine()
    assert "tasks:bob" not in [s.feed for s in engine.task_sources()]
    engine.close()


def test_the_menu_says_today_by_app():
    """Zoo Code, IBM Bob and the old Kilo CLI spending today: the menu's by-app line names each, biggest first."""
    from trayburn.engine import Engine
    from trayburn.tray import host
    from trayburn.tray.app import TrayApp

    now = int(time.time() * 1000)
    home = Path.home()
    writer(home / ".config/Code/User/globalStorage/zoocodeorganization.zoo-code", "z1", [
        say(now, "text", "go"), usage_say(now, "api_req_started", 5000, 10, 0, 4000, 0.01)])  # fmt: skip
    writer(home / ".kilocode/cli/global", "k1", [
        say(now, "text", "go"), usage_say(now, "api_req_started", 7000, 10, 0, 0, 0.02)])  # fmt: skip
    app = TrayApp(Engine(), host.load_pystray("dummy"), host.capabilities("dummy"))
    app.tick()
    texts = [str(i.text) for i in app.icon.menu.items]
    assert "Kilo CLI (0.x) $0.02 · Zoo Code $0.01" in texts, texts
    app.engine.close()
