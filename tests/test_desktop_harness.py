"""The real-desktop harness, proven on a tiny pystray app (tests/helpers/tiny_tray.py).

Needs Xvfb, trayer, xdotool, imagemagick, dbus (skips without them). Screenshots
land in tests/_artifacts/.
"""

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.desktop import DesktopError, Window, has_colour_near, image_colours
from helpers.tiny_tray import ICON_RGB

from trayburn.tray.host import BackendError, capabilities, choose_backend, describe

TINY = Path(__file__).parent / "helpers" / "tiny_tray.py"
NAME = "tiny-tray"


@pytest.fixture
def tiny(desktop_app, tmp_path):
    """Start tiny_tray with a backend; its marker files go to tmp_path."""

    def start(backend: str) -> subprocess.Popen:
        argv = [sys.executable, str(TINY), "--backend", backend, "--out", str(tmp_path), "--name", NAME]
        return desktop_app(argv, log=f"tiny-{backend}")

    return start


def test_gtk_icon_docks_and_draws(desktop, tiny, artifacts):
    tiny("gtk")
    icon = desktop.wait_for_tray_icon(cls=NAME)
    tray = desktop.tray_geometry()
    assert _inside(icon, tray)

    shot = desktop.screenshot(artifacts / "desktop-gtk-docked.png")
    assert len(image_colours(shot, tray)) > 1, "the tray is one flat colour"
    assert has_colour_near(image_colours(shot, icon.rect), ICON_RGB)


def test_gtk_left_click_runs_default_item(desktop, tiny, tmp_path):
    tiny("gtk")
    icon = desktop.wait_for_tray_icon(cls=NAME)
    desktop.click(*icon.rect.center, button=1)
    desktop.wait_for((tmp_path / "open").exists, 10, what="the Open item's marker file")
    assert not desktop.popup_menus()


def test_gtk_right_click_opens_menu_and_items_work(desktop, tiny, tmp_path, artifacts):
    tiny("gtk")
    icon = desktop.wait_for_tray_icon(cls=NAME)
    desktop.click(*icon.rect.center, button=3)
    menu = desktop.wait_for_menu()
    assert menu.matches(cls=NAME) and "_NET_WM_WINDOW_TYPE_POPUP_MENU" in menu.types
    assert menu.rect.y >= icon.rect.y + icon.rect.height - 2, "menu should open below the tray"
    assert menu.rect.height > 3 * 16, "three items"

    desktop.screenshot(artifacts / "desktop-gtk-menu.png")  # shows "Hello 4.21"
    assert len(image_colours(artifacts / "desktop-gtk-menu.png", menu.rect)) > 2

    desktop.key("Down", "Down", "Return")  # second item: "Hello 4.21"
    desktop.wait_for((tmp_path / "hello").exists, 10, what="the Hello item's marker file")
    desktop.wait_for_no_menu()
    assert not (tmp_path / "open").exists()


def test_gtk_quit_from_menu_stops_the_icon(desktop, tiny, tmp_path):
    proc = tiny("gtk")
    icon = desktop.wait_for_tray_icon(cls=NAME)
    desktop.click(*icon.rect.center, button=3)
    desktop.wait_for_menu()
    desktop.key("Up", "Return")  # last item: "Quit"
    desktop.wait_for(lambda: proc.poll() is not None, 10, what="tiny_tray to exit")
    assert proc.returncode == 0
    assert (tmp_path / "stopped").exists()
    desktop.wait_for(lambda: not desktop.tray_icons(cls=NAME), 10, what="the icon to undock")


def test_xorg_icon_docks_but_cannot_be_clicked(desktop, tiny, artifacts):
    from Xlib import X

    icon = _dock_xorg(desktop, tiny)
    assert _inside(icon, desktop.tray_geometry())
    shot = desktop.screenshot(artifacts / "desktop-xorg-docked.png")
    assert has_colour_near(image_colours(shot, icon.rect), ICON_RGB)

    # Why there are no clicks: nobody selects ButtonPress on pystray's xorg window.
    # If this starts failing, pystray fixed it: revisit backend._OVERRIDES.
    assert not desktop.event_mask(icon) & X.ButtonPressMask
    caps = capabilities("xorg")
    assert not caps.has_menu and not caps.has_default_action
    assert any("no clicks" in line for line in caps.missing())


def test_backend_choice_on_this_desktop(desktop):
    assert _in_child("choose_backend()", desktop.env) == "gtk"
    no_display = {k: v for k, v in desktop.env.items() if k != "DISPLAY"}
    assert _in_child("choose_backend()", no_display) in ("appindicator", "xorg")
    assert _in_child("loaded_backend(load_pystray('gtk'))", desktop.env) == "gtk"


def test_capability_table_matches_pystray_source():
    """The table mirrors pystray's HAS_* flags, except the documented overrides."""
    flags = _pystray_flags()
    for backend, (menu, default, notify) in flags.items():
        caps = capabilities(backend)
        expected_default = False if backend == "xorg" else default
        assert (caps.has_menu, caps.has_default_action, caps.can_notify) == (menu, expected_default, notify), backend
    assert set(flags) == {"gtk", "appindicator", "xorg", "darwin", "win32", "dummy"}


# -- backend choice without a display (move to tests/test_backend.py) ----------------
@pytest.mark.parametrize(
    ("env", "platform", "loadable", "expected"),
    [
        ({"PYSTRAY_BACKEND": "xorg", "DISPLAY": ":0"}, "linux", {"gtk"}, "xorg"),
        ({"PYSTRAY_BACKEND": ""}, "darwin", set(), "darwin"),  # empty = unset, as in pystray
        ({"DISPLAY": ":0"}, "linux", {"gtk", "appindicator"}, "gtk"),
        ({}, "linux", {"gtk", "appindicator"}, "appindicator"),  # gtk needs a DISPLAY
        ({"DISPLAY": ":0"}, "linux", {"appindicator"}, "appindicator"),
        ({"DISPLAY": ":0"}, "linux", set(), "xorg"),
        ({}, "darwin", {"gtk"}, "darwin"),
        ({}, "win32", set(), "win32"),
    ],
)
def test_choose_backend(env, platform, loadable, expected):
    assert choose_backend(env, platform=platform, available=loadable.__contains__) == expected


def test_unknown_backend_is_a_clear_error():
    with pytest.raises(BackendError, match="PYSTRAY_BACKEND='qt' is not a pystray backend"):
        choose_backend({"PYSTRAY_BACKEND": "qt"})
    with pytest.raises(BackendError, match="unknown tray backend"):
        capabilities("qt")


def test_describe_is_one_line_naming_the_lacks():
    line = describe("appindicator")
    assert "\n" not in line and line.startswith("tray backend appindicator")
    assert "no left-click action" in line
    assert "lacks" not in describe("gtk")


def test_load_pystray_cannot_switch_backends():
    code = (
        "from trayburn.tray.host import *\n"
        "assert loaded_backend(load_pystray('dummy')) == 'dummy'\n"
        "try:\n    load_pystray('xorg')\nexcept BackendError as e:\n    print(e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "PYSTRAY_BACKEND")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True, timeout=60
    ).stdout
    assert "already loaded with the dummy backend, not xorg" in out


# -- helpers --------------------------------------------------------------------
def _dock_xorg(desktop, tiny, attempts: int = 3) -> Window:
    """Launch tiny_tray on xorg until its icon is docked and drawn.

    pystray's xorg backend sends SYSTEM_TRAY_REQUEST_DOCK on every _update_icon and
    _show (so twice at start, and again on each icon change); trayer re-embeds the
    window each time, and about 1 launch in 10 ends undocked or 1 px wide. That is
    pystray + trayer, not the harness, so this retries the launch.
    """
    for _ in range(attempts):
        proc = tiny("xorg")
        try:
            return desktop.wait_for_tray_icon(cls=NAME, timeout=3)
        except DesktopError:
            desktop.stop(proc)
            desktop.wait_for(lambda: not desktop.find_windows(cls=NAME), 10, what="the failed xorg icon's window to go")
    pytest.fail(f"the xorg icon did not dock in {attempts} launches")


def _inside(icon: Window, area) -> bool:
    r = icon.rect
    return (
        area.x <= r.x
        and r.x + r.width <= area.x + area.width
        and area.y <= r.y
        and r.y + r.height <= area.y + area.height
    )


def _in_child(expression: str, env: dict[str, str]) -> str:
    code = f"import json; from trayburn.tray.host import *; print(json.dumps({expression}))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _pystray_flags() -> dict[str, tuple[bool, bool, bool]]:
    """HAS_MENU, HAS_DEFAULT_ACTION, HAS_NOTIFICATION per backend, read from the
    installed pystray's source without importing it."""
    root = Path(importlib.util.find_spec("pystray").submodule_search_locations[0])
    base = _class_flags(root / "_base.py", "Icon")
    gtk_base = {**base, **_class_flags(root / "_util" / "gtk.py", "GtkIcon")}
    flags = {}
    for backend in ("gtk", "appindicator", "xorg", "darwin", "win32", "dummy"):
        inherited = gtk_base if backend in ("gtk", "appindicator") else base
        merged = {**inherited, **_class_flags(root / f"_{backend}.py", "Icon")}
        flags[backend] = (merged["HAS_MENU"], merged["HAS_DEFAULT_ACTION"], merged["HAS_NOTIFICATION"])
    return flags


def _class_flags(path: Path, class_name: str) -> dict[str, bool]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return {
                t.id: stmt.value.value
                for stmt in node.body
                if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                for t in stmt.targets
                if isinstance(t, ast.Name) and t.id.startswith("HAS_")
            }
    return {}
