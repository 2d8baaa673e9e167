"""Whether the tray can start on this desktop (display, session bus, tray host; real sockets) and what a host
shows: on macOS today's cost is the status item's title beside the bare mark."""

from __future__ import annotations

import socket

import pytest

from trayburn.tray import host, icons, probe


# --- can the tray start here -------------------------------------------------------------------
def test_no_display_is_fatal_with_one_line():
    check = host.can_start({}, platform="linux")
    assert check.kind == "no_display" and check.fatal
    assert check.message == "no graphical session: DISPLAY is not set; `trayburn today` works in a terminal"
    assert "Wayland" in host.can_start({"WAYLAND_DISPLAY": "wayland-0"}, platform="linux").message


@pytest.mark.parametrize("display", [":4242", "nonsense", "/tmp/trayburn-no-such-socket:0"])
def test_a_display_nobody_answers_is_fatal(display):
    check = host.can_start({"DISPLAY": display}, platform="linux")
    assert check.kind == "display_unreachable" and check.fatal and display in check.message


def test_macos_and_windows_need_no_checks():
    assert host.can_start({}, platform="darwin").ok and host.can_start({}, platform="win32").ok


@pytest.fixture
def listening(tmp_path):
    """A real unix socket that accepts connections (as an X server's or a bus's would)."""
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    yield path
    server.close()


def test_a_listening_display_without_a_bus_is_fatal(listening):
    check = host.can_start({"DISPLAY": f"{listening}:0"}, platform="linux")
    assert check.kind == "no_session_bus" and "dbus-run-session" in check.message


def test_the_bare_x11_backend_needs_no_bus(listening):
    check = host.can_start({"DISPLAY": f"{listening}:0", "PYSTRAY_BACKEND": "xorg"}, platform="linux")
    assert not check.fatal and check.kind == "no_tray_host"  # our socket is no X server: no tray found


def test_bus_addresses(listening, tmp_path):
    assert probe.bus_problem(f"unix:path={listening}") is None
    assert "No such file" in probe.bus_problem(f"unix:path={tmp_path / 'gone'}")
    assert probe.bus_problem(f"unix:path={tmp_path / 'gone'};unix:path={listening}") is None  # the second answers
    assert probe.bus_problem("tcp:host=localhost,port=1") is None  # not tried: assumed fine


def test_the_per_user_bus_counts_as_a_bus(listening, tmp_path):
    (tmp_path / "bus").symlink_to(listening)
    assert probe._default_bus({"XDG_RUNTIME_DIR": str(tmp_path)}) == f"unix:path={tmp_path / 'bus'}"
    assert probe._default_bus({}) is None


class _Button:
    """AppKit's NSStatusBarButton as far as the darwin icon uses it (no Mac here: pystray's darwin backend
    needs AppKit), recording what it was given."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []

    def setImagePosition_(self, position: int) -> None:
        self.calls.append(("imagePosition", position))

    def setTitle_(self, text: str) -> None:
        self.calls.append(("title", text))


def test_on_macos_todays_cost_is_the_status_items_title_beside_the_bare_mark():
    """pystray's darwin Icon keeps its NSStatusItem as `_status_item` (pystray/_darwin.py); the tray sets the
    item's button title to the label and draws the icon as the mark. Not verified on a Mac: this checks the
    wiring against a stand-in for pystray's class and AppKit's button only."""
    button = _Button()
    pystray = host.load_pystray("dummy")

    class DarwinIcon(pystray.Icon):  # pystray's dummy Icon with the darwin backend's status item
        HAS_NOTIFICATION = True

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._status_item = type("StatusItem", (), {"button": staticmethod(lambda: button)})()

        def _update_icon(self):
            pass

        def _update_title(self):
            pass

        def _update_menu(self):
            pass

    icon = icons._darwin(DarwinIcon)("trayburn", None, "trayburn")
    assert icon.has_label and icon.draws_label and not icon.activates and icon.notifications
    icon.set_label("$0.33", "$00.00")
    assert button.calls == [("imagePosition", icons.IMAGE_LEFT), ("title", "$0.33")]

    class NoTitle(DarwinIcon):  # an AppKit whose button has no title to set: left as pystray makes it
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._status_item = type("StatusItem", (), {"button": staticmethod(lambda: object())})()

    plain = icons._darwin(NoTitle)("trayburn", None, "trayburn")
    assert not plain.has_label and not plain.draws_label
