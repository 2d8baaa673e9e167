"""pystray's Icon classes, one per backend, with trayburn's fixes (`icon_class`); and the icon's size until the tray
says (`start_size`). Never chooses the backend (`host` does) and never draws (`draw` does).

gi is imported inside the classes of the backends that use it. Every class `icon_class()` returns offers, beside
pystray's own API:

- ``on_size``: a callable given the tray's real icon size in pixels when the tray reports one
  (gtk: GtkStatusIcon's size-changed), so the icon can be drawn at that size, not scaled;
- ``notifications``: whether desktop notifications work. A notification service that cannot
  start (a D-Bus session without one, or one that fails to activate) costs notifications, not
  the tray: pystray's notifier would raise in the icon's start and take the tray down;
- ``activates``: whether a primary click runs the default menu item (appindicator: only where
  the library has an "activate" signal, checked at run time; a middle click runs it everywhere);
- the tooltip: gtk sets the title only; here the status icon's tooltip is set too;
- ``has_label`` / ``set_label(text, guide)``: text beside the icon, where the item can carry it
  (appindicator's XAyatanaLabel; macOS: the status item's title, not verified on a Mac here); ``draws_label``:
  the host surely draws it (macOS), so the icon can be the bare mark.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from . import host

log = logging.getLogger(__name__)

SizeCallback = Callable[[int], None]
NOTIFIER = True  # False: no session bus (start.main): the icon runs without asking for a notifier
FIT_CHECK_MS = 400  # after drawing at the tray's size, when to look whether the tray gave the icon that room


def icon_class(pystray: ModuleType, backend: str | None = None) -> type:
    """The Icon class to instantiate: pystray's, with trayburn's fixes for the backend it loaded (or for
    `backend`, one pystray loads beside it: the appindicator Icon a gtk icon gives way to, `TrayApp.become`)."""
    loaded = host.loaded_backend(pystray)
    backend = backend or loaded
    if backend == loaded:
        base = pystray.Icon
    else:
        host.capabilities(backend)  # validates the name
        try:
            base = importlib.import_module(f"pystray._{backend}").Icon
        except (ImportError, ValueError) as exc:
            raise host.BackendError(f"the {backend} tray backend does not load: {exc}") from exc
    if backend == "dummy":
        return _headless(base)
    if backend == "gtk":
        return _gtk(base)
    if backend == "appindicator":
        return _appindicator(base)
    if backend == "darwin":
        return _darwin(base)
    return _plain(base, activates=backend in ("win32",))


# The icon's size until the tray says (gtk does): libappindicator's 22 px; the bare X11 backend and
# macOS scale the image themselves; Windows' small-icon size (16 px at 100 %) is asked at start.
START_SIZE = {"appindicator": 22, "xorg": 64, "darwin": 64}


def start_size(backend: str) -> int:
    if backend == "win32":
        try:
            import ctypes

            return int(ctypes.windll.user32.GetSystemMetrics(49)) or 16  # type: ignore[attr-defined,unused-ignore]
        except (AttributeError, OSError):  # SM_CXSMICON unavailable
            return 16
    return START_SIZE.get(backend, 24)


def _plain(base: type, activates: bool) -> type:
    class Icon(base):
        on_size: SizeCallback | None = None
        notifications = bool(getattr(base, "HAS_NOTIFICATION", False))

        @property
        def activates(self) -> bool:
            return activates

    return Icon


class _SafeNotifier:
    """For pystray's GtkIcon subclasses: start without a notifier when it cannot be had."""

    _notifier: Any

    def _initialize(self) -> None:
        from pystray._util import notify_dbus

        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            self._notifier = notify_dbus.Notifier() if NOTIFIER else None  # (None: said once, at the start)
        except Exception as exc:
            log.warning("desktop notifications are unavailable here (%s); the tray runs without them", exc)
            self._notifier = None
        self._mark_ready()  # type: ignore[attr-defined]

    @property
    def notifications(self) -> bool:
        return getattr(self, "_notifier", None) is not None

    def _notify(self, message: str, title: str | None = None) -> None:
        if self._notifier is None:
            log.info("not shown (no notification service): %s", message)
            return
        super()._notify(message, title)  # type: ignore[misc]

    def _remove_notification(self) -> None:
        if self._notifier is not None:
            super()._remove_notification()  # type: ignore[misc]


def _gtk(base: type) -> type:
    from gi.repository import GLib

    class GtkTrayIcon(_SafeNotifier, base):
        on_size: SizeCallback | None = None
        activates = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._status_icon.connect("size-changed", self._size_changed)

        def _size_changed(self, status_icon: Any, size: int) -> bool:
            """`size`: what the tray offers across it (a horizontal tray's height). The other side is what the
            icon asks for (trayer gives a 16 px icon a 16 px wide slot even on a 32 px panel): drawn at `size`,
            the icon gets a square slot where the tray grants it; where it does not (trayer keeps a 20 px icon
            in a 16 px slot), it is drawn again at the slot's real size rather than scaled into it.

            The slot is read only once the tray has laid the icon out, and believed only when two looks
            FIT_CHECK_MS apart agree: read at once (or once), it could still be the 16 px slot of the icon
            before this drawing, and the icon stayed 16 px on a 32 px trayer (1 start in 8)."""
            self._offered = size
            self._resize(size)
            if size > 0:
                GLib.timeout_add(FIT_CHECK_MS, self._fit, size, True)
            return True  # drawn at that size: GTK need not scale it

        def _fit(self, size: int, look_again: bool) -> bool:
            if getattr(self, "_offered", size) != size:  # the tray offered another size since: that one counts
                return False
            ok, _screen, area, _orientation = self._status_icon.get_geometry()
            room = min(area.width, area.height) if ok else 0
            if 0 < room < size:
                if look_again:
                    GLib.timeout_add(FIT_CHECK_MS, self._fit, size, False)
                else:
                    self._resize(room)
            return False  # once

        def _resize(self, size: int) -> None:
            if size > 0 and self.on_size is not None:
                try:
                    self.on_size(size)
                except Exception:
                    log.exception("could not redraw the icon at %d px", size)

        def _update_title(self) -> None:
            super()._update_title()
            GLib.idle_add(self._set_tooltip)

        def _show(self) -> None:
            super()._show()
            GLib.idle_add(self._set_tooltip)  # a title set before the icon was visible was not applied

        def _set_tooltip(self) -> bool:
            self._status_icon.set_title(self.title or "trayburn")
            self._status_icon.set_tooltip_text(self.title or None)
            return False  # once

    return GtkTrayIcon


def _appindicator(base: type) -> type:
    from gi.repository import GLib, GObject

    class IndicatorIcon(_SafeNotifier, base):
        on_size: SizeCallback | None = None
        has_label = True  # the item's XAyatanaLabel: GNOME's AppIndicator extension draws it beside the icon

        def set_label(self, text: str, guide: str) -> None:
            """The text beside the icon, in the panel's own font (`guide`: the widest text expected, so the
            panel keeps the item's width as the figure changes). Thread-safe, like pystray's setters."""
            GLib.idle_add(self._set_label, text, guide)

        def _set_label(self, text: str, guide: str) -> bool:
            self._appindicator.set_label(text, guide)
            return False  # once

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            kind = type(self._appindicator).__gtype__
            self._activates = bool(GObject.signal_lookup("activate", kind))
            if self._activates:  # libayatana-appindicator >= 0.6 / newer libappindicator
                self._appindicator.connect("activate", lambda *_: self())

        @property
        def activates(self) -> bool:
            return self._activates

        def _update_menu(self) -> None:
            # The middle click's target is let go before pystray's own idle call replaces the menu (and before the
            # indicator goes, `_finalize`): libayatana-appindicator follows the old item out of its menu and
            # asserted (a Gtk-CRITICAL "gtk_widget_get_parent" line at every start).
            GLib.idle_add(self._release_target)
            super()._update_menu()
            GLib.idle_add(self._target_default)  # after pystray's own idle call built the menu

        def _release_target(self) -> bool:
            self._appindicator.set_secondary_activate_target(None)
            return False  # once

        def _finalize(self) -> None:
            self._release_target()
            super()._finalize()

        def _create_menu_item(self, descriptor: Any) -> Any:
            item = super()._create_menu_item(descriptor)
            text = str(getattr(descriptor, "text", ""))  # (a separator's "- - - -" has no "_")
            if gnome_menu_labels() and not getattr(descriptor, "default", False):
                shown = literal_label(text)
                if shown != text:
                    item.set_use_underline(True)  # sent as it is (libdbusmenu-gtk doubles each "_" otherwise)
                    item.set_label(shown)
            return item

        def _target_default(self) -> bool:
            """A middle click (SNI SecondaryActivate) runs the default item: the summary."""
            items = [i for i in (self.menu.items if self.menu else ()) if i.visible]
            index = next((n for n, item in enumerate(items) if item.default), None)
            widgets = self._menu_handle.get_children() if self._menu_handle is not None else []
            if index is not None and index < len(widgets):
                self._appindicator.set_secondary_activate_target(widgets[index])
            return False  # once

    return IndicatorIcon


def gnome_menu_labels(env: Mapping[str, str] | None = None) -> bool:
    """Whether the menu is read by GNOME's AppIndicator extension, which takes only the first "_" of a dbusmenu
    label for a mnemonic (it drops the first "_" followed by another character: `label.replace(/_([^_])/, '$1')`
    in its dbusMenu.js) and shows the rest as written. libdbusmenu-gtk sends a plain GTK label with each "_"
    doubled, which libdbusmenu hosts (xfce4-panel, KDE) undo and GNOME showed as "b_tools__patch"."""
    desktop = (os.environ if env is None else env).get("XDG_CURRENT_DESKTOP", "").upper()
    return "GNOME" in desktop or "UBUNTU" in desktop


def literal_label(text: str) -> str:
    """The dbusmenu label GNOME's extension shows as `text`: one "_" in front, which is the "_" it drops (before
    the text's first character, or the last of its leading underscores); `text` itself where it has no "_" to
    lose."""
    return "_" + text if "_" in text and text.strip("_") else text


IMAGE_LEFT = 2  # AppKit's NSImageLeft (NSCellImagePosition): the image, then the title to its right


def _darwin(base: type) -> type:
    """macOS: today's cost as the status item's title (`NSStatusItem.button.title`) beside the mark, as a
    StatusNotifierItem's label is on GNOME. Built from pystray's darwin source (its `_status_item`) and AppKit's
    documented API; not verified on a Mac here. Where the button has no title to set, the item is left as
    pystray makes it (the icon carries the figure)."""

    class StatusItemIcon(base):
        on_size: SizeCallback | None = None
        notifications = bool(getattr(base, "HAS_NOTIFICATION", False))
        activates = False  # pystray's darwin icon: the menu opens on a click, there is no default action
        has_label = False
        draws_label = False  # the menu bar always draws the title: the icon is then the bare mark

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            button = getattr(getattr(self, "_status_item", None), "button", lambda: None)()
            self.has_label = self.draws_label = hasattr(button, "setTitle_")
            self._label_failed = False

        def set_label(self, text: str, guide: str) -> None:
            """The title beside the image (`guide` is for hosts that keep a width; the menu bar sizes the item
            to its title). On AppKit's main thread: TrayApp calls it through `_ui`."""
            try:
                button = self._status_item.button()
                button.setImagePosition_(IMAGE_LEFT)
                button.setTitle_(text)
            except Exception:  # never the tray's end: the tooltip and the menu still say the figure
                if not self._label_failed:
                    log.exception("could not set the status item's title")
                self._label_failed = True

    return StatusItemIcon


def _headless(base: type) -> type:
    """pystray's dummy Icon raises on every update; this one keeps what would have been shown,
    so `trayburn` runs headless (and menu tests run) without special cases."""

    class HeadlessIcon(base):
        on_size: SizeCallback | None = None
        notifications = True
        activates = True
        has_label = False
        label: tuple[str, str] | None = None  # what set_label() was last given (a host that draws labels)

        def set_label(self, text: str, guide: str) -> None:
            self.label = (text, guide)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.updates: list[str] = []
            self.notified: list[tuple[str, str | None]] = []
            self._stopped: threading.Event | None = None
            super().__init__(*args, **kwargs)

        def _update_icon(self) -> None:
            self.updates.append("icon")

        def _update_title(self) -> None:
            self.updates.append("title")

        def _update_menu(self) -> None:
            self.updates.append("menu")

        def _show(self) -> None:
            pass

        def _hide(self) -> None:
            pass

        def _notify(self, message: str, title: str | None = None) -> None:
            self.notified.append((message, title))

        def _remove_notification(self) -> None:
            pass

        def _run(self) -> None:
            self._stopped = threading.Event()
            self._mark_ready()
            self._stopped.wait()

        def _stop(self) -> None:
            if self._stopped:
                self._stopped.set()

    return HeadlessIcon
