"""X windows as plain records, read with python-xlib: geometry, names, types, visibility.

Used by tests/helpers/desktop.py; every X call is short-lived and tolerates windows vanishing mid-walk.
"""

from __future__ import annotations

from dataclasses import dataclass


class DesktopError(AssertionError):
    """The desktop did not reach an expected state in time."""


@dataclass(frozen=True)
class Rect:
    x: int
    y: int
    width: int
    height: int

    @property
    def center(self) -> tuple[int, int]:
        return self.x + self.width // 2, self.y + self.height // 2

    @property
    def box(self) -> tuple[int, int, int, int]:
        """(left, top, right, bottom), as Pillow's crop() wants it."""
        return self.x, self.y, self.x + self.width, self.y + self.height


@dataclass(frozen=True)
class Window:
    id: int
    name: str  # WM_NAME, "" if none
    instance: str  # WM_CLASS, first part
    cls: str  # WM_CLASS, second part
    rect: Rect  # in root (screen) coordinates
    viewable: bool  # mapped, and all its ancestors too
    override_redirect: bool  # popups: menus, tooltips
    types: tuple[str, ...]  # _NET_WM_WINDOW_TYPE atom names
    parent: int

    def matches(self, name: str | None = None, cls: str | None = None) -> bool:
        return (name is None or self.name == name) and (cls is None or cls in (self.instance, self.cls))


class XConnection:
    """``with XConnection(":3") as (display, root)`` - a short-lived X connection."""

    def __init__(self, name: str):
        self._name = name

    def __enter__(self):
        from Xlib import display as xdisplay

        self._display = xdisplay.Display(self._name)
        return self._display, self._display.screen().root

    def __exit__(self, *exc) -> None:
        self._display.close()


def walk(display, root, window, depth: int | None = None, parent_viewable: bool = True):
    """Yield Window records for ``window``'s descendants (not ``window`` itself).

    Windows vanish while we look (popups close, apps exit): those are skipped.
    """
    from Xlib.error import XError

    try:
        children = window.query_tree().children
    except XError:
        return
    for child in children:
        try:
            info = describe_window(display, root, child, window.id, parent_viewable)
        except XError:
            continue
        yield info
        if depth is None or depth > 1:
            yield from walk(display, root, child, None if depth is None else depth - 1, info.viewable)


def describe_window(display, root, window, parent: int, parent_viewable: bool) -> Window:
    from Xlib import X

    attrs = window.get_attributes()
    geom = window.get_geometry()
    origin = root.translate_coords(window, 0, 0)
    wm_class = window.get_wm_class() or ("", "")
    return Window(
        id=window.id,
        name=_name(display, window),
        instance=wm_class[0],
        cls=wm_class[1],
        rect=Rect(origin.x, origin.y, geom.width, geom.height),
        viewable=parent_viewable and attrs.map_state == X.IsViewable,
        override_redirect=bool(attrs.override_redirect),
        types=_types(display, window),
        parent=parent,
    )


def _name(display, window) -> str:
    net = window.get_full_property(display.intern_atom("_NET_WM_NAME"), display.intern_atom("UTF8_STRING"))
    if net is not None:
        value = net.value
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    name = window.get_wm_name()
    return name.decode("latin-1") if isinstance(name, bytes) else (name or "")


def _types(display, window) -> tuple[str, ...]:
    from Xlib import Xatom

    prop = window.get_full_property(display.intern_atom("_NET_WM_WINDOW_TYPE"), Xatom.ATOM)
    if prop is None:
        return ()
    return tuple(display.get_atom_name(atom) for atom in prop.value)


def is_menu(window: Window) -> bool:
    """GTK marks menus _NET_WM_WINDOW_TYPE_POPUP_MENU; a window without a type
    that is bigger than a tooltip's few pixels also counts (other toolkits)."""
    menu_types = {"_NET_WM_WINDOW_TYPE_POPUP_MENU", "_NET_WM_WINDOW_TYPE_DROPDOWN_MENU", "_NET_WM_WINDOW_TYPE_MENU"}
    if window.types:
        return bool(menu_types & set(window.types))
    return window.rect.height > 40
