"""Colours, fonts and sizes for the summary window: light or dark, scaled for the screen's DPI.

The `theme` setting decides: "light", "dark", or "auto": the desktop's colour scheme as
`trayburn.shade` finds it (the same answer the tray icon gets), light where nothing says.
Fonts are set in points, which Tk scales by `tk scaling`; pixel sizes go through `Metrics.px`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tkinter as tk
import tkinter.font as tkfont
from collections.abc import Mapping
from dataclasses import dataclass
from tkinter import ttk

from .. import shade


@dataclass(frozen=True)
class Palette:
    """The window's colours in one theme."""

    name: str
    bg: str
    surface: str
    card: str
    fg: str
    muted: str
    border: str
    heading: str
    hover: str
    stripe: str
    select: str
    accent: str
    bar: str
    grid: str
    running: str
    failed: str
    cancelled: str


LIGHT = Palette(
    "light",
    bg="#f3f4f6",
    surface="#ffffff",
    card="#ffffff",
    fg="#1f2328",
    muted="#6a737d",
    border="#d8dce1",
    heading="#eceff3",
    hover="#e2e6ec",
    stripe="#f7f8fa",
    select="#ffe3cc",
    accent="#e8590c",
    bar="#f08c3a",
    grid="#e6e8ec",
    running="#1a7f37",
    failed="#c92a2a",
    cancelled="#8a6d00",
)
DARK = Palette(
    "dark",
    bg="#1b1d21",
    surface="#24272c",
    card="#2a2d33",
    fg="#e6e8eb",
    muted="#9aa1aa",
    border="#3a3e45",
    heading="#2f3238",
    hover="#3a3e45",
    stripe="#282b30",
    select="#5c3a1e",
    accent="#ff8a3d",
    bar="#ff9a52",
    grid="#34373d",
    running="#56d364",
    failed="#ff7b72",
    cancelled="#e3b341",
)
BASE_DPI = 96.0
AMBER = {"light": "#d98e04", "dark": "#e3b341"}


def budget_styles(p: Palette) -> dict[str, str]:
    """The budget bar's style per level: under 80 % neutral, from 80 % amber, from 100 % red."""
    return {
        "Budget.Horizontal.TProgressbar": p.muted,
        "Warn.Budget.Horizontal.TProgressbar": AMBER.get(p.name, "#d98e04"),
        "Over.Budget.Horizontal.TProgressbar": p.failed,
    }


def resolve(setting: str | None, env: Mapping[str, str] | None = None, *, run: shade.Runner | None = None) -> Palette:
    return DARK if shade.window_shade(setting, env, run=run) == "dark" else LIGHT


@dataclass(frozen=True)
class Metrics:
    """Pixel sizes for this screen: `px(n)` is n pixels at 96 DPI."""

    scale: float  # screen pixels per 96-DPI pixel
    row_height: int

    def px(self, n: float) -> int:
        return max(1, round(n * self.scale))


def desktop_dpi(root: tk.Misc, env: Mapping[str, str] | None = None) -> float | None:
    """The DPI the desktop asks for, where it says more than the X server does: Xft.dpi (how GNOME, KDE and
    Xfce set 200 % on X11), or GDK_SCALE x GDK_DPI_SCALE x 96 (GTK's own); None where neither is set."""
    env = os.environ if env is None else env
    try:
        gdk = float(env.get("GDK_SCALE") or 1) * float(env.get("GDK_DPI_SCALE") or 1)
    except ValueError:
        gdk = 1.0
    found = [d for d in (_xft_dpi(root), BASE_DPI * gdk if gdk != 1 else None) if d and 48 <= d <= 960]
    return max(found) if found else None


def _xft_dpi(root: tk.Misc) -> float | None:
    """Xft.dpi from the root window's RESOURCE_MANAGER (python-xlib, which pystray brings on Linux; else
    `xrdb -query`); None where it is not set or cannot be read."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):  # X11's; not Tk on macOS or Windows
        return None
    text = ""
    try:
        from Xlib import Xatom  # (optional, and X11's only)
        from Xlib import display as xdisplay

        d = xdisplay.Display(root.winfo_screen())
        try:
            prop = d.screen().root.get_full_property(d.intern_atom("RESOURCE_MANAGER"), Xatom.STRING)
            text = prop.value.decode("utf-8", "replace") if prop is not None and isinstance(prop.value, bytes) else ""
        finally:
            d.close()
    except Exception:  # no python-xlib, or no answer: ask xrdb
        try:
            done = subprocess.run(
                ["xrdb", "-query"],
                capture_output=True,
                text=True,
                timeout=2,
                env={**os.environ, "DISPLAY": root.winfo_screen()},
            )
            text = done.stdout
        except (OSError, subprocess.SubprocessError):
            return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Xft.dpi":
            try:
                return float(value.strip())
            except ValueError:
                return None
    return None


def follow_desktop_dpi(root: tk.Misc, env: Mapping[str, str] | None = None) -> None:
    """Tk's scaling (its points, hence every font and every `Metrics.px`) from the desktop's DPI, where that is
    more than the X server's: Tk reads only the server's, so at Xft.dpi 192 its fonts doubled (Xft) but the
    layout stayed at 96 and text was cut."""
    dpi = desktop_dpi(root, env)
    if dpi is not None and dpi > root.winfo_fpixels("1i") + 1:
        root.tk.call("tk", "scaling", dpi / 72.0)


def scale_of(root: tk.Misc) -> float:
    """tk scaling (pixels per point) relative to a 96-DPI screen, never below 1."""
    points = root.winfo_fpixels("1i") / 72.0
    return max(1.0, points * 72.0 / BASE_DPI)


def fonts(root: tk.Misc) -> dict[str, tkfont.Font]:
    """Named fonts in points (so HiDPI screens scale them); created once per Tk interpreter."""
    for name in ("TkDefaultFont", "TkTextFont", "TkMenuFont", "TkTooltipFont"):
        tkfont.nametofont(name, root=root).configure(size=10)
    base = tkfont.nametofont("TkDefaultFont", root=root).actual()
    family = base["family"]
    specs: dict[str, dict[str, object]] = {
        "heading": dict(size=10, weight="bold"),
        "title": dict(size=15, weight="bold"),
        "figure": dict(size=17, weight="bold"),
        "small": dict(size=9),
        "caption": dict(size=9, weight="bold"),
    }
    out: dict[str, tkfont.Font] = {}
    for key, spec in specs.items():
        name = f"trayburn.{key}"
        options = [x for k, v in {"family": family, **spec}.items() for x in (f"-{k}", v)]
        # made with Tcl directly: a tkinter Font object would delete its named font when collected
        verb = "configure" if name in tkfont.names(root) else "create"
        root.tk.call("font", verb, name, *options)
        out[key] = tkfont.nametofont(name, root=root)
    return out


def apply(root: tk.Misc, p: Palette, env: Mapping[str, str] | None = None) -> Metrics:
    """Style every ttk widget for palette `p`; returns the sizes to lay out with (at the desktop's DPI)."""
    follow_desktop_dpi(root, env)
    f = fonts(root)
    scale = scale_of(root)
    line = tkfont.nametofont("TkDefaultFont", root=root).metrics("linespace")
    m = Metrics(scale, line + round(9 * scale))
    s = ttk.Style(root)
    s.theme_use("clam")
    s.configure(
        ".",
        background=p.bg,
        foreground=p.fg,
        fieldbackground=p.surface,
        bordercolor=p.border,
        lightcolor=p.bg,
        darkcolor=p.bg,
        troughcolor=p.bg,
        focuscolor=p.accent,
        selectbackground=p.select,
        selectforeground=p.fg,
        insertcolor=p.fg,
        arrowcolor=p.muted,
    )
    _tables(s, p, m, f)
    _controls(s, p, m)
    _labels(s, p, f)
    if isinstance(root, (tk.Tk, tk.Toplevel)):
        root.configure(background=p.bg)
    return m


def _tables(s: ttk.Style, p: Palette, m: Metrics, f: dict) -> None:
    s.configure(
        "Treeview",
        background=p.surface,
        fieldbackground=p.surface,
        foreground=p.fg,
        rowheight=m.row_height,
        borderwidth=0,
        relief="flat",
    )
    s.map("Treeview", background=[("selected", p.select)], foreground=[("selected", p.fg)])
    s.layout("Treeview", [("Treeview.treearea", {"sticky": "nswe"})])
    s.configure(
        "Treeview.Heading",
        background=p.heading,
        foreground=p.muted,
        font=f["caption"],
        relief="flat",
        borderwidth=0,
        lightcolor=p.heading,
        darkcolor=p.heading,
        padding=(m.px(8), m.px(5)),
    )
    s.map("Treeview.Heading", background=[("active", p.hover)], foreground=[("active", p.fg)])
    s.configure("Totals.Treeview", background=p.heading, fieldbackground=p.heading, font=f["heading"])
    for style, colour in budget_styles(p).items():  # the budget bar by level: neutral, amber, red
        s.configure(
            style, background=colour, troughcolor=p.grid, bordercolor=p.border, lightcolor=colour, darkcolor=colour
        )
    s.map("Totals.Treeview", background=[("selected", p.heading)])
    for orient in ("Vertical", "Horizontal"):
        s.configure(
            f"{orient}.TScrollbar",
            background=p.heading,
            troughcolor=p.surface,
            bordercolor=p.surface,
            lightcolor=p.heading,
            darkcolor=p.heading,
            arrowcolor=p.muted,
            gripcount=0,
            arrowsize=m.px(12),
        )
        s.map(f"{orient}.TScrollbar", background=[("active", p.hover)])


def _controls(s: ttk.Style, p: Palette, m: Metrics) -> None:
    s.configure(
        "TButton",
        background=p.surface,
        foreground=p.fg,
        bordercolor=p.border,
        lightcolor=p.surface,
        darkcolor=p.surface,
        padding=(m.px(10), m.px(4)),
        focusthickness=1,
    )
    s.map(
        "TButton",
        background=[("disabled", p.surface), ("pressed", p.hover), ("active", p.hover)],
        foreground=[("disabled", p.border)],
        bordercolor=[("focus", p.accent)],
        lightcolor=[("disabled", p.surface)],
        darkcolor=[("disabled", p.surface)],
    )
    s.configure("Nav.TButton", padding=(m.px(6), m.px(4)))
    s.configure("Toolbutton", padding=(m.px(8), m.px(3)))  # the period toggles: scaled, so apart at 200 %
    s.configure(
        "TEntry",
        fieldbackground=p.surface,
        foreground=p.fg,
        bordercolor=p.border,
        lightcolor=p.surface,
        darkcolor=p.surface,
        insertcolor=p.fg,
        padding=(m.px(6), m.px(4)),
    )
    s.map("TEntry", bordercolor=[("focus", p.accent)], lightcolor=[("focus", p.accent)])
    s.configure("TFrame", background=p.bg)
    s.configure("Card.TFrame", background=p.card, bordercolor=p.border, relief="solid", borderwidth=1)
    s.configure("Table.TFrame", background=p.surface, bordercolor=p.border, relief="solid", borderwidth=1)


def _labels(s: ttk.Style, p: Palette, f: dict) -> None:
    s.configure("TLabel", background=p.bg, foreground=p.fg)
    s.configure("Muted.TLabel", foreground=p.muted)
    s.configure("Small.TLabel", foreground=p.muted, font=f["small"])
    s.configure("Title.TLabel", font=f["title"])
    s.configure("Section.TLabel", font=f["caption"], foreground=p.muted)
    s.configure("Error.TLabel", foreground=p.failed, font=f["heading"])
    s.configure("Card.TLabel", background=p.card, foreground=p.muted, font=f["caption"])
    s.configure("Figure.TLabel", background=p.card, foreground=p.fg, font=f["figure"])
    s.configure("Note.TLabel", background=p.card, foreground=p.muted, font=f["small"])
    s.configure("Fact.TLabel", foreground=p.muted)
    s.configure("Status.TLabel", foreground=p.muted, font=f["small"])
