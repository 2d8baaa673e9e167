"""A real X desktop for tests: Xvfb + a D-Bus session + trayer (an XEmbed tray).

``start_desktop(logs)`` brings it up and returns a ``Desktop``; ``Desktop.close()``
tears it down. Every wait polls a real condition (the display number written by
Xvfb, the bus address written by dbus-daemon, the tray selection having an owner,
a window being mapped, a file existing) until a deadline; nothing sleeps blindly.

Windows are read with python-xlib (a pystray dependency on Linux), input is sent
with xdotool, screenshots are taken with ImageMagick's ``import``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from .daemons import kill_group, read_line
from .pixels import contrast, has_colour_near, image_colours, ink_height, luminance, text_contrast
from .xwindows import DesktopError, Rect, Window, XConnection, is_menu, walk

__all__ = [
    "DesktopError",
    "Rect",
    "Window",
    "contrast",
    "has_colour_near",
    "image_colours",
    "luminance",
    "text_contrast",
    "ink_height",
]

T = TypeVar("T")

SCREEN = "1280x800x24"
TRAY_HEIGHT = 32
TRAYER_ARGS = (
    "--edge",
    "top",
    "--align",
    "right",
    "--widthtype",
    "pixel",
    "--width",
    "200",
    "--height",
    str(TRAY_HEIGHT),
    "--SetDockType",
    "true",
    "--expand",
    "true",
    # A dark panel like most desktops': the tint only applies when "transparent"
    # (--transparent false gives GTK2's light grey #dcdad5 whatever the tint).
    "--transparent",
    "true",
    "--alpha",
    "0",
    "--tint",
    "0x333333",
)
# program -> the Debian/Ubuntu package that provides it
TOOLS = {
    "Xvfb": "xvfb",
    "trayer": "trayer",
    "xdotool": "xdotool",
    "import": "imagemagick",
    "dbus-daemon": "dbus",
}
# the StatusNotifierItem desktop (xfce4-panel's tray hosts SNI items and XEmbed icons)
SNI_TOOLS = {
    "xfce4-panel": "xfce4-panel",
    "dunst": "dunst",
    "dbus-update-activation-environment": "dbus-x11",
    "gdbus": "libglib2.0-bin",
}
LIGHT_PANEL = ("--transparent", "false")  # GTK2's light grey #dcdad5
DARK_PANEL = ("--transparent", "true", "--alpha", "0", "--tint", "0x333333")


# Whether the test being run carries the `display` marker (tests/conftest.py sets it before the test's fixtures);
# None outside pytest (the screenshot scripts, the benches), where a display may start freely.
DISPLAY_MARKED: bool | None = None


def x_server_may_start() -> None:
    """Fail a test that would start an X server without the `display` marker: `-m "not display"` starts none."""
    if DISPLAY_MARKED is False:
        raise AssertionError(
            "this test starts an X server but is not marked `display`: add pytest.mark.display to it (or to its file's"
            ' pytestmark), so that `-m "not display"` leaves it out'
        )


def missing_tools(tools: dict[str, str] = TOOLS) -> list[str]:
    """apt packages to install for the desktop tests, empty if all are there."""
    return sorted({pkg for tool, pkg in tools.items() if shutil.which(tool) is None})


def gtk_available() -> bool:
    """PyGObject with GTK 3: what the gtk and appindicator tray backends need."""
    try:
        import gi

        gi.require_version("Gtk", "3.0")
        return True
    except (ImportError, ValueError):
        return False


def trayer_args(height: int = TRAY_HEIGHT, light: bool = False) -> tuple[str, ...]:
    """trayer's arguments for a panel `height` px tall, light grey or dark."""
    base = list(TRAYER_ARGS[: TRAYER_ARGS.index("--transparent")])
    base[base.index("--height") + 1] = str(height)
    return (*base, *(LIGHT_PANEL if light else DARK_PANEL))


def wait_for(
    predicate: Callable[[], T], timeout: float = 10.0, *, interval: float = 0.05, what: str | None = None
) -> T:
    """Poll ``predicate`` until it returns something truthy; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise DesktopError(
                f"timed out after {timeout:g}s waiting for {what or getattr(predicate, '__name__', 'a condition')}"
            )
        time.sleep(interval)


class Desktop:
    """A running Xvfb display with a tray. Build it with ``start_desktop()``."""

    def __init__(self, logs: Path):
        self.logs = logs
        self.display = ""
        self.env: dict[str, str] = {}  # full environment for processes on this desktop
        self._procs: list[subprocess.Popen] = []

    # -- processes -------------------------------------------------------
    def spawn(
        self,
        argv: Sequence[str],
        *,
        log: str,
        env: dict[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        exact_env: dict[str, str] | None = None,
    ) -> subprocess.Popen:
        """Start ``argv`` on this desktop in its own process group; stdout+stderr go
        to ``logs/<log>.log``. Stopped by ``stop()`` or at teardown."""
        with open(self.logs / f"{log}.log", "ab") as out:
            proc = subprocess.Popen(
                list(argv),
                env=exact_env if exact_env is not None else {**self.env, **(env or {})},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                pass_fds=tuple(pass_fds),
                start_new_session=True,
            )
        self._procs.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen, timeout: float = 5.0) -> int:
        """SIGTERM the process group, SIGKILL it if it lingers; returns the exit code."""
        if proc in self._procs:
            self._procs.remove(proc)
        return kill_group(proc, timeout)

    def close(self) -> None:
        """Stop everything this desktop started, newest first (Xvfb last)."""
        while self._procs:
            self.stop(self._procs[-1])

    # -- looking ---------------------------------------------------------
    def wait_for(self, predicate: Callable[[], T], timeout: float = 10.0, *, what: str | None = None) -> T:
        return wait_for(predicate, timeout, what=what)

    def screenshot(self, path: Path | str, region: Rect | None = None) -> Path:
        """Save the screen (or ``region`` of it) as a PNG; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        argv = ["import", "-display", self.display, "-window", "root"]
        if region:
            argv += ["-crop", f"{region.width}x{region.height}+{region.x}+{region.y}", "+repage"]
        subprocess.run([*argv, str(path)], check=True, env=self.env, timeout=30, capture_output=True)
        return path

    def windows(self) -> list[Window]:
        """Every window on the screen, parents before children."""
        with self._x() as (display, root):
            return list(walk(display, root, root))

    def find_windows(
        self, name: str | None = None, cls: str | None = None, *, viewable: bool | None = None
    ) -> list[Window]:
        """Windows whose WM_NAME is ``name`` and/or WM_CLASS (either part) is ``cls``."""
        return [w for w in self.windows() if w.matches(name, cls) and (viewable is None or w.viewable == viewable)]

    def tray_geometry(self) -> Rect:
        """Where trayer's panel is on the screen."""
        panel = self._tray_panel()
        if panel is None:
            raise DesktopError("trayer's panel window is not on the screen")
        return panel.rect

    def tray_icons(self, name: str | None = None, cls: str | None = None) -> list[Window]:
        """Viewable icon windows docked in the tray (the clients trayer embedded).

        A 1 px wide embed (trayer sometimes leaves pystray's xorg icon so) is not
        counted: nobody could see or click it.
        """
        panel = self._tray_panel()
        if panel is None:
            return []
        windows = self.windows()
        sockets = {w.id for w in windows if w.parent == panel.id}
        return [w for w in windows if w.parent in sockets and w.viewable and w.rect.width > 1 and w.matches(name, cls)]

    def wait_for_tray_icon(self, name: str | None = None, cls: str | None = None, timeout: float = 10.0) -> Window:
        """The docked icon, once it is viewable and something is drawn in it."""

        def drawn_icon():
            icons = self.tray_icons(name, cls)
            if len(icons) == 1 and len(image_colours(self._grab(icons[0].rect))) > 1:
                return icons[0]
            return None

        return self.wait_for(drawn_icon, timeout, what=f"one drawn tray icon (name={name!r}, cls={cls!r})")

    def tooltips(self) -> list[Window]:
        """Visible tooltips: viewable top-level windows of type _NET_WM_WINDOW_TYPE_TOOLTIP."""
        with self._x() as (display, root):
            tops = [w for w in walk(display, root, root, depth=1) if w.parent == root.id]
        return [w for w in tops if w.viewable and "_NET_WM_WINDOW_TYPE_TOOLTIP" in w.types]

    def popup_menus(self) -> list[Window]:
        """Visible popup menus: viewable override-redirect top-level windows."""
        with self._x() as (display, root):
            tops = [w for w in walk(display, root, root, depth=1) if w.parent == root.id]
        return [w for w in tops if w.viewable and w.override_redirect and w.rect.width > 1 and is_menu(w)]

    def wait_for_menu(self, timeout: float = 10.0) -> Window:
        return self.wait_for(lambda: next(iter(self.popup_menus()), None), timeout, what="a popup menu to appear")

    def wait_for_no_menu(self, timeout: float = 10.0) -> None:
        self.wait_for(lambda: not self.popup_menus(), timeout, what="the popup menu to close")

    def event_mask(self, window: Window) -> int:
        """The X events any client selects on ``window`` (Xlib.X.*Mask bits)."""
        with self._x() as (display, root):
            xwin = display.create_resource_object("window", window.id)
            return xwin.get_attributes().all_event_masks

    # -- input -----------------------------------------------------------
    def click(self, x: int, y: int, button: int = 1) -> None:
        """Move the pointer to (x, y), then press and release ``button`` there."""
        self.move_pointer(x, y)
        self._xdotool("click", str(button))

    def move_pointer(self, x: int, y: int) -> None:
        # Not `mousemove --sync`: it blocks ~15 s when the pointer is already there.
        self._xdotool("mousemove", str(x), str(y))
        self.wait_for(lambda: self._pointer() == (x, y), 5, what=f"the pointer at {x},{y}")

    def key(self, *keys: str) -> None:
        """Type key names (xdotool syntax: "Escape", "Down", "Return")."""
        self._xdotool("key", "--delay", "30", *keys)

    def park_pointer(self) -> None:
        """Move the pointer to an empty corner, away from the tray and menus."""
        self.move_pointer(0, self._screen_height() - 1)

    # -- internals -------------------------------------------------------
    def _xdotool(self, *args: str) -> None:
        subprocess.run(["xdotool", *args], check=True, env=self.env, timeout=30, capture_output=True)

    def _grab(self, rect: Rect) -> Path:
        return self.screenshot(self.logs / "_probe.png", rect)

    def _tray_panel(self) -> Window | None:
        panels = [w for w in self.find_windows(cls="trayer", viewable=True) if w.instance == "panel"]
        return panels[0] if panels else None

    def _pointer(self) -> tuple[int, int]:
        with self._x() as (display, root):
            reply = root.query_pointer()
            return reply.root_x, reply.root_y

    def _screen_height(self) -> int:
        with self._x() as (display, root):
            return display.screen().height_in_pixels

    def _x(self):
        return XConnection(self.display)

    def has_sni_watcher(self) -> bool:
        """Whether a StatusNotifierWatcher is on this desktop's session bus (asked with gdbus)."""
        argv = ["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path"]
        argv += ["/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner"]
        done = subprocess.run(
            [*argv, "org.kde.StatusNotifierWatcher"], env=self.env, capture_output=True, text=True, timeout=10
        )
        return "true" in done.stdout

    def _tray_owned(self) -> bool:
        with self._x() as (display, root):
            owner = display.get_selection_owner(display.intern_atom("_NET_SYSTEM_TRAY_S0"))
            return getattr(owner, "id", owner) != 0  # X.NONE (0) when nobody owns it


def start_desktop(
    logs: Path,
    timeout: float = 20.0,
    *,
    tray: Sequence[str] | None = TRAYER_ARGS,
    bus: bool = True,
    bus_sees_display: bool = True,
) -> Desktop:
    """Start Xvfb, a D-Bus session bus (unless not ``bus``) and trayer with ``tray`` arguments
    (no tray at all with None); return the ready Desktop. ``bus_sees_display`` False: the bus
    activates services without DISPLAY, so a notification daemon it starts cannot open a window
    (as seen with xfce4-notifyd activated from a bare session)."""
    logs.mkdir(parents=True, exist_ok=True)
    desk = Desktop(logs)
    desk.env = _base_env()
    try:
        _start_x(desk, timeout, bus, bus_sees_display)
        if tray is not None:
            desk.spawn(["trayer", *tray], log="trayer")
            desk.wait_for(desk._tray_owned, timeout, what="trayer to own _NET_SYSTEM_TRAY_S0")
            desk.wait_for(desk._tray_panel, timeout, what="trayer's panel to be mapped")
    except BaseException:
        desk.close()
        raise
    return desk


def start_sni_desktop(logs: Path, home: Path, timeout: float = 30.0) -> Desktop:
    """Xvfb + D-Bus + dunst + xfce4-panel (its default panel, whose tray hosts StatusNotifierItems),
    with HOME and XDG_CONFIG_HOME in ``home``; ready once a StatusNotifierWatcher is on the bus."""
    logs.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    desk = Desktop(logs)
    desk.env = _base_env() | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    try:
        _start_x(desk, timeout, True)
        keys = ("DISPLAY", "HOME", "XDG_CONFIG_HOME", "GDK_BACKEND", "NO_AT_BRIDGE")
        subprocess.run(["dbus-update-activation-environment", *keys], env=desk.env, check=True, timeout=30)
        desk.spawn(["dunst"], log="dunst")
        desk.spawn(["xfce4-panel", "--disable-wm-check"], log="xfce4-panel")
        desk.wait_for(desk.has_sni_watcher, timeout, what="xfce4-panel's StatusNotifierWatcher on the bus")
    except BaseException:
        desk.close()
        raise
    return desk


def _start_x(desk: Desktop, timeout: float, bus: bool, bus_sees_display: bool = True) -> None:
    """Xvfb on a free display, then (if ``bus``) a session bus; both in ``desk.env``."""
    x_server_may_start()
    number = _start_reporting(
        desk, ["Xvfb", "-screen", "0", SCREEN, "-nolisten", "tcp", "-noreset", "-displayfd"], "xvfb", timeout
    )
    desk.display = f":{number}"
    desk.env["DISPLAY"] = desk.display
    if not bus:
        desk.env.pop("XDG_RUNTIME_DIR", None)  # nor the per-user bus GLib would find there
        return
    address = _start_reporting(
        desk,
        ["dbus-daemon", "--session", "--nofork", "--nosyslog", "--print-address"],
        "dbus",
        timeout,
        joined=True,
        env=None if bus_sees_display else {k: v for k, v in desk.env.items() if k != "DISPLAY"},
    )
    desk.env["DBUS_SESSION_BUS_ADDRESS"] = address


def _base_env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("WAYLAND_DISPLAY", "PYSTRAY_BACKEND", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY"):
        env.pop(key, None)
    env.update(
        {
            "GDK_BACKEND": "x11",
            "NO_AT_BRIDGE": "1",  # no at-spi bus launcher left behind per GTK app
            "GSETTINGS_BACKEND": "memory",
            "GTK_THEME": "Adwaita",
        }
    )
    return env


def _start_reporting(
    desk: Desktop, argv: list[str], log: str, timeout: float, joined: bool = False, env: dict[str, str] | None = None
) -> str:
    """Start a daemon that writes one line (display number, bus address) to an fd
    once it is ready; return that line. ``joined``: --opt=FD instead of --opt FD."""
    read_fd, write_fd = os.pipe()
    try:
        argv = argv[:-1] + [f"{argv[-1]}={write_fd}"] if joined else [*argv, str(write_fd)]
        proc = desk.spawn(argv, log=log, pass_fds=[write_fd], exact_env=env)
    finally:
        os.close(write_fd)
    try:
        line = read_line(read_fd, timeout)
    finally:
        os.close(read_fd)
    if not line:
        raise DesktopError(f"{argv[0]} exited ({proc.poll()}) before it was ready: see {desk.logs / (log + '.log')}")
    return line


# -- GNOME Shell 43 with the AppIndicator extension (Ubuntu's default tray path; /work/shared/desktops.md) ----
GNOME_TOOLS = {
    "Xvfb": "xvfb",
    "import": "imagemagick",
    "xdotool": "xdotool",
    "dbus-daemon": "dbus",
    "gdbus": "libglib2.0-bin",
    "gnome-shell": "gnome-shell",
    "gjs": "gjs",  # runs the shell's notification service (org.freedesktop.Notifications); only recommended by it
}
APPINDICATOR_EXTENSION = "ubuntu-appindicators@ubuntu.com"  # Debian's and Ubuntu's id for it
EXTENSION_DIR = Path("/usr/share/gnome-shell/extensions") / APPINDICATOR_EXTENSION
GNOME_BAR = 32  # the top bar's height in px at 96 dpi (measured from screenshots of GNOME Shell 43.9)
GNOME_SHELL = ("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell")  # bus name, object path, interface


def missing_gnome() -> list[str]:
    """apt packages to install for a GNOME Shell desktop with the AppIndicator extension, empty if all are there."""
    missing = set(missing_tools(GNOME_TOOLS))
    if not (EXTENSION_DIR / "metadata.json").is_file():
        missing.add("gnome-shell-extension-appindicator")
    return sorted(missing)


def gdbus_call(desk: Desktop, dest: str, path: str, method: str, *args: str, timeout: float = 10) -> str:
    """A method call on the desktop's session bus with gdbus; its reply as gdbus prints it, "" on an error."""
    argv = ["gdbus", "call", "--session", "--dest", dest, "--object-path", path, "--method", method, *args]
    try:
        done = subprocess.run(argv, env=desk.env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ""
    return done.stdout if done.returncode == 0 else ""


def dbus_property(desk: Desktop, dest: str, path: str, interface: str, name: str) -> str:
    """A D-Bus property as gdbus prints it ("(<'$0.33'>,)", "(<true>,)"); "" when it cannot be read."""
    return gdbus_call(desk, dest, path, "org.freedesktop.DBus.Properties.Get", interface, name)


def start_gnome_desktop(
    logs: Path,
    home: Path,
    timeout: float = 120.0,
    *,
    settings: str = "",
    before_shell: Callable[[Desktop], object] | None = None,
) -> Desktop:
    """Xvfb + a private system bus + a session bus + `gnome-shell --x11 --replace` with the AppIndicator extension
    enabled, HOME, XDG_CONFIG_HOME and XDG_RUNTIME_DIR in ``home``; ready once the extension's
    StatusNotifierWatcher is on the bus and the overview GNOME opens at start is closed.

    The extension is enabled with GLib's keyfile settings backend (a file in ``home``), so no dconf service is
    needed and the person's own settings are never read or written. Notifications go to the shell's message list
    without a banner: GNOME keeps a banner up until the person touches the mouse or keyboard (as root it puts one
    up at start), which would cover the desktop for good under Xvfb. ``settings``: more keyfile groups
    ("[org/gnome/desktop/interface]\\nscaling-factor=uint32 2\\n" for a 200 % desktop). ``before_shell``: run once
    the display and the buses are up, before the shell starts (a tray started before the panel, as at login)."""
    logs.mkdir(parents=True, exist_ok=True)
    runtime = home / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    keyfiles = home / ".config" / "glib-2.0" / "settings"
    keyfiles.mkdir(parents=True, exist_ok=True)
    (keyfiles / "keyfile").write_text(
        f"[org/gnome/shell]\nenabled-extensions=['{APPINDICATOR_EXTENSION}']\ndisable-user-extensions=false\n"
        "welcome-dialog-last-shown-version='999'\n"  # no "take a tour" dialog over the desktop
        "[org/gnome/desktop/notifications]\nshow-banners=false\n" + settings
    )
    desk = Desktop(logs)
    desk.env = _base_env() | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CURRENT_DESKTOP": "GNOME",
        "XDG_SESSION_TYPE": "x11",
        "GSETTINGS_BACKEND": "keyfile",
    }
    try:
        _start_x(desk, timeout, True)
        system = _start_reporting(  # gnome-shell wants a system bus: a private one is enough
            desk, ["dbus-daemon", "--session", "--nofork", "--nosyslog", "--print-address"], "sysbus", timeout, True
        )
        desk.env["DBUS_SYSTEM_BUS_ADDRESS"] = system
        if before_shell is not None:
            before_shell(desk)
        desk.spawn(["gnome-shell", "--x11", "--replace"], log="gnome-shell")
        desk.wait_for(desk.has_sni_watcher, timeout, what="the AppIndicator extension's StatusNotifierWatcher")
        close_overview(desk, timeout)
    except BaseException:
        desk.close()
        raise
    return desk


def overview_active(desk: Desktop) -> bool | None:
    """Whether GNOME's overview is showing; None when the shell does not say."""
    reply = dbus_property(desk, *GNOME_SHELL, "OverviewActive")
    return True if "true" in reply else False if "false" in reply else None


def close_overview(desk: Desktop, timeout: float = 30.0) -> None:
    """Close the overview GNOME opens at start, so the top bar is drawn as over a desktop: once the bar is drawn
    (the overview opens with it), Escape until the shell says the overview is closed, twice in a row."""
    bar = Rect(0, 0, screen_width(desk), GNOME_BAR)
    closed_checks = []

    def closed() -> bool:
        if len(image_colours(desk._grab(bar))) < 2:  # the bar is not drawn yet
            return False
        if overview_active(desk) is False:
            closed_checks.append(True)
            return len(closed_checks) >= 2
        closed_checks.clear()
        desk.key("Escape")
        return False

    wait_for(closed, timeout, interval=0.5, what="GNOME's top bar drawn and its overview closed")


def screen_width(desk: Desktop) -> int:
    with desk._x() as (display, _root):
        return display.screen().width_in_pixels
