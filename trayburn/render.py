"""Text for a terminal: each command's result as the lines and tables `trayburn` prints (its JSON is the
result itself, written by `as_json`), with what a terminal would obey taken out and widths in the columns a
terminal gives each character. Never prints (cli.py does); the words it shares with the tray and the window
are in words.py, which it imports and they use without it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .figures.burn import Burn
from .figures.costs import covered_by
from .figures.day import DayReport, ModelCost, SessionDetail, SessionSummary, priced_cost
from .figures.history import MachinesReport
from .figures.money import Money, usd
from .files import clean
from .sources.base import MAX_COST
from .words import NOT_PAID, UNPRICED_MARK, USD, Covered, columns, pace_text, plan_text, plural, shorten, tokens


def one_line(text: str) -> str:
    """`clean`, and on one line (for a table cell)."""
    return clean(text).replace("\n", " ").replace("\t", " ")


def table(headers: list[str], rows: list[list[str]], right: Collection[int] = frozenset()) -> str:
    rows = [[one_line(str(c)) for c in r] for r in rows]
    widths = [max(columns(str(x)) for x in col) for col in zip(headers, *rows, strict=True)]

    def line(cells):
        return "  ".join(
            _pad(str(c), w, i in right) for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _pad(cell: str, width: int, right: bool) -> str:
    fill = " " * (width - columns(cell))
    return fill + cell if right else cell + fill


if TYPE_CHECKING:
    from .figures.attribution import Attribution, Share
    from .figures.listprice import CacheReport, WhatIf
    from .health import Health
    from .pricing.show import SeenModel

# What to do, by Health.kind (the verdict says what is wrong; this says what to try).
HINTS = {
    "settings_broken": "fix that line by hand (`trayburn config path` shows the file); trayburn never overwrites it",
    "override_missing": "correct or remove that override, or create the folder",
    "not_installed": "install the Cline CLI (npm i -g cline), or set cline_dir if it lives elsewhere",
    "no_sessions_folder": "run one Cline task; the folder appears with its first session",
    "sessions_not_a_folder": "move that file away, or set sessions_dir to the real folder",
    "no_sessions": "run one Cline task, or check that sessions_dir is the folder Cline writes to",
    "ledger_disk_full": "free some space on that disk; the next refresh catches up (nothing is lost)",
    "ledger_read_only": "make the ledger and its folder writable by you (or use another --state-dir)",
    "ledger_io": "check the disk holding the ledger; trayburn left the file as it is",
    "ledger_damaged": "nothing to do: the damaged copy is kept beside the new ledger; run `trayburn doctor` again",
    "file_problems": "each file above says why; it is read again when it changes",
    "sync_problems": "the Sharing lines above say what is wrong; the other figures are counted as usual",
}


def doctor(h: Health, settings_file_exists: bool, unpriced: Sequence[SeenModel] = ()) -> str:
    lines = ["Cline folders:"]
    for lv in h.levels:
        lines.append(f"  {lv.label:16} {lv.path}  [{lv.source()}]{'' if lv.exists else '  (missing)'}")
    lines.append(f"Settings file:   {h.config_path}" + ("" if settings_file_exists else "  (none; defaults)"))
    if h.settings_problem:
        where = f" (line {h.settings_problem.line})" if h.settings_problem.line else ""
        lines.append(f"  problem{where}: {h.settings_problem.message}")
    lines += [f"  warning: {w}" for w in h.config_warnings]
    lines.append(f"Ledger:          {h.ledger_path}")
    if h.ledger_notice:
        lines.append(f"  {h.ledger_notice}")
    if h.ledger_fault:
        lines.append(f"  problem: {h.ledger_fault}")
    lines += backup_lines(h.extra.get("backups"), h.extra.get("rebuilt"))
    lines.append(
        f"Sessions:        {h.sessions}"
        + (f" (+{h.removed_sessions} removed from disk, still counted)" if h.removed_sessions else "")
    )
    lines += tray_lines(h.extra.get("tray"))
    lines += sync_lines(h.extra.get("sync") or {})
    lines += task_place_lines(h.extra.get("task_places") or [])
    lines += kilo_lines(h.extra.get("kilo"))
    if h.problems:
        lines.append(f"Unreadable files ({len(h.problems)}):")
        lines += [f"  {p}: {r}" for p, r in h.problems]
    if h.settling:
        lines.append(f"Changed in the last minute and not readable yet ({len(h.settling)}; retried at each refresh):")
        lines += [f"  {p}: {r}" for p, r in h.settling]
    if unpriced:
        lines.append(f"Models with no known price ({len(unpriced)}; their calls are unpriced, never $0):")
        lines += [
            f"  {m.name}: {plural(m.unpriced_calls, 'call')}, {tokens(m.tokens)} tokens"
            f" ({tokens(m.input)} in, {tokens(m.output)} out)"
            for m in unpriced
        ]
        lines.append("  `trayburn prices` says how to add a price in the settings file")
    lines += ["", h.verdict + (f". To fix: {HINTS[h.kind]}" if h.kind in HINTS else "")]
    return "\n".join(lines)


def backup_lines(backups: dict[str, Any] | None, rebuilt: dict[str, Any] | None) -> list[str]:
    """doctor's lines on the ledger's backups (`backups.report`) and its last rebuild (`salvage.Rebuilt`)."""
    lines = []
    if backups is not None:
        newest = backups["newest"]
        age = f"; the newest {newest['path']}, {newest['age_s'] / 3600:.0f} h old" if newest else ""
        lines.append(f"  backups: {backups['count']} of trayburn's (the last {backups['kept']} are kept){age}")
        failure = backups.get("last_failure")
        if failure:
            lines.append(f"  the last backup failed: {failure['reason']}")
        for path in backups.get("not_trayburns", []):
            lines.append(f"  named like a backup, not trayburn's (never used unless sound, never deleted): {path}")
    if rebuilt is not None:
        when = datetime.fromtimestamp(rebuilt["at_ms"] / 1000).strftime("%Y-%m-%d %H:%M")
        lines.append(f"  rebuilt {when}: {rebuilt['line']}")
    return lines


def task_place_lines(apps: list[dict[str, Any]]) -> list[str]:
    """doctor's part on the editor apps' task folders (`Engine.task_places_json`): found ones, then off ones."""
    shown = any(not a["enabled"] or any(p["exists"] or p["origin"].startswith("settings") for p in a["places"])
                for a in apps)  # fmt: skip
    if not shown:  # none of the apps is used here: nothing to say
        return []
    lines = ["Editor task folders:"]
    for app in apps:
        if not app["enabled"]:
            lines.append(f"  {app['label']:16} off  [settings ({app['enabled_key']})]")
            continue
        found = [p for p in app["places"] if p["exists"]]
        if not found:
            lines.append(f"  {app['label']:16} none found ({len(app['places'])} places looked at)")
        for p in found:
            lines.append(f"  {app['label']:16} {p['path']}  [{p['origin']}]  {plural(p['tasks'], 'task')}")
        lines += [f"  {app['label']:16} {p['path']}  [{p['origin']}]  (missing)" for p in app["places"]
                  if not p["exists"] and p["origin"].startswith("settings")]  # fmt: skip
        written = app.get("written_cost")
        if written and written["tasks"]:
            lines.append(f"  {'':16} its files' cost fields total {written['total']:g} over "
                         f"{plural(written['tasks'], 'task')}, unit {written['unit']}: not counted; "
                         "its calls are estimated from their tokens at list price")  # fmt: skip
    return lines


def kilo_lines(kilo: dict[str, Any] | None) -> list[str]:
    """doctor's part on Kilo Code 7 (`Engine.kilo_json`): each database, where its path came from, what it holds or
    why nothing is read from it."""
    if not kilo:
        return []
    if not kilo["enabled"]:
        return [f"Kilo Code 7:     off  [settings ({kilo['enabled_key']})]"]
    lines = []
    for db in kilo["databases"]:
        if not db["exists"]:
            what = "(none: no Kilo Code 7 here)"
        elif db["problem"]:
            what = f"not read: {db['problem']}"
        else:
            what = f"{plural(db['sessions'], 'session')}, {plural(db['messages'], 'message')}"
            what += f", schema {db['schema']}" + (" (newer than trayburn knows)" if db.get("newer") else "")
        lines.append(f"  {db['path']}  [{db['origin']}]  {what}")
    return ["Kilo Code 7:", *lines]


# Why the tray cannot start, in a few words (the whole reason is `tray.host.StartCheck.message`).
_NO_TRAY = {"no_display": "no DISPLAY", "display_unreachable": "the display does not answer"}


def tray_lines(tray: dict[str, Any] | None) -> list[str]:
    """Doctor's tray line: whether the tray can start here, and the backend it would run. That it
    cannot is no problem with the data (doctor over SSH), so it never changes the verdict."""
    if tray is None:
        return ["Tray:            -"]
    if tray.get("window"):
        return [*tray_lines({**tray, "window": None}), f"Summary window:  unavailable: {tray['window']}"]
    if not tray["can_start"]:
        short = _NO_TRAY.get(tray["kind"])
        if short:
            return [f"Tray:            cannot start here ({short}) — fine over SSH"]
        return ["Tray:            cannot start here", f"  {tray['message']}"]
    if tray["kind"] == "no_tray_host":
        return [f"Tray:            can start here, but nothing shows it; {tray['backend']}", f"  {tray['message']}"]
    return [f"Tray:            can start here ({tray['message']}); {tray['backend']}"]


def as_json(data: Any, indent: int | None = 2) -> str:
    """The one JSON writer for results: strict JSON (NaN or Infinity is a bug, raised as ValueError)."""
    out = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    try:
        out.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not UTF-8: JSON's own escapes (\udcff), printable anywhere
        out = json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False)
    return out


def json_list(items: Iterable[Any], level: int = 0) -> Iterator[str]:
    """A list as `as_json` writes it (indent 2; `level`: as a value that deep in a document), one item at a
    time: a long list (every session) is never held whole, as objects or as text. Each item is strict JSON
    (ValueError on NaN or Infinity); an item holding a name that is not UTF-8 is written with JSON's own escapes
    (the whole document was, before streaming)."""
    first, inner, outer = True, "\n" + "  " * (level + 1), "\n" + "  " * level
    for item in items:
        text = as_json(item).replace("\n", inner)  # (a newline in JSON is structure: strings escape theirs)
        yield ("[" if first else ",") + inner + text
        first = False
    yield "[]" if first else outer + "]"


def json_with_list(doc: dict[str, Any], key: str, items: Iterable[Any]) -> Iterator[str]:
    """`doc` as `as_json` writes it, its `key` (a top-level list) written one item at a time (`json_list`)."""
    mark = "\x00list\x00"
    head, _, tail = as_json({k: (mark if k == key else v) for k, v in doc.items()}).partition(as_json(mark))
    yield head
    yield from json_list(items, level=1)
    yield tail


def day(r: DayReport, money: Money = USD, pace: Burn | None = None) -> str:
    """`pace`: today's burn rate and projection (`figures.burn`), on the line under the head."""
    cost = cost_cell(r.cost_usd, r.estimated_cost_usd, r.unpriced_calls, r.calls, compact=True, money=money)
    head = f"{r.date} ({r.timezone}): {cost} over {plural(r.calls, 'call')} in {plural(r.sessions, 'session')}"
    lines = [head]
    if pace is not None:
        lines.append(f"  {pace_text(pace, money)}")
    if r.estimated_cost_usd:
        lines.append(f"  of which {money.text(r.estimated_cost_usd)} estimated from tokens (no cost reported)")
    if r.unpriced_calls:
        names = ", ".join(r.unpriced_models)
        has, are = ("has", "is") if r.unpriced_calls == 1 else ("have", "are")
        lines.append(f"  {plural(r.unpriced_calls, 'call')} {has} no known price and {are} not in the total ({names};")
        lines.append("  `trayburn prices` says how to add a price)")
    lines += _plan_and_cap(r, r.capped_calls, money)
    t = r.tokens
    lines.append(
        f"  tokens: {tokens(t.input)} in ({tokens(t.cache_read)} cache read, "
        f"{tokens(t.cache_write)} cache write), {tokens(t.output)} out"
    )
    if r.models:
        lines += [
            "",
            table(
                ["model", "calls", "cost"],
                [[m.name, str(m.calls), _model_cost(m, money)] for m in r.models],
                right={1, 2},
            ),
        ]
    return _noted("\n".join(lines), money)


def _noted(text: str, money: Money) -> str:
    return text + (f"\n({money.note})" if money.note else "")


def _plan_and_cap(covered: Covered, capped: int, money: Money = USD) -> list[str]:
    lines = []
    what = plan_text(covered, money.text)
    if what:
        lines.append(f"  {what} (not in the total)")
    if capped:
        lines.append(f"  {plural(capped, 'call')} with absurd token counts: each estimate held at {usd(MAX_COST)}")
    return lines


def _model_cost(m: ModelCost, money: Money) -> str:
    return NOT_PAID.get(m.billing or "") or cost_cell(
        m.cost_usd, m.estimated_cost_usd, m.unpriced_calls, m.calls, money=money
    )


def cost_cell(
    cost: float, estimated: float, unpriced: int, calls: int, compact: bool = False, money: Money = USD
) -> str:
    """A cost with its marks (* estimated; unpriced calls, as '?' when compact); calls none of
    which has a price are "unpriced", never $0."""
    if priced_cost(cost, calls, unpriced) is None:
        return "unpriced"
    tail = (UNPRICED_MARK if compact else f" (+{unpriced} unpriced)") if unpriced else ""
    return money.text(cost, bool(estimated)) + tail


def sessions(items: Iterable[SessionSummary], money: Money = USD) -> str:
    """The sessions as a table (`items` read once: only each row's cells are kept)."""
    rows = [
        [
            (s.started_at or "")[:16].replace("T", " "),
            shorten(s.title, 48),
            s.state + (" (removed)" if s.removed else ""),
            ", ".join(s.models) or "-",
            str(s.calls),
            covered_by(s.calls, s.plan_calls, s.free_calls)
            or cost_cell(s.cost_usd, s.estimated_cost_usd, s.unpriced_calls, s.calls, money=money),
            s.id,
        ]
        for s in items
    ]
    if not rows:
        return "No sessions."
    return _noted(table(["started", "title", "status", "models", "calls", "cost", "id"], rows, right={4, 5}), money)


def session(d: SessionDetail, money: Money = USD) -> str:
    s = d.summary
    lines = [
        one_line(s.title),
        f"  id {s.id}  ·  {s.state}{' (removed from disk)' if s.removed else ''}",
        f"  project {s.project or '-'}  ·  {s.cwd or '-'}",
        f"  started {s.started_at or '-'}  ended {s.ended_at or '-'}"
        + (f"  ({d.duration_s:.0f} s)" if d.duration_s is not None else ""),
        f"  {plural(s.calls, 'call')}, {cost_cell(s.cost_usd, 0.0, s.unpriced_calls, s.calls, money=money)}"
        + (f" ({money.text(s.estimated_cost_usd)} estimated)" if s.estimated_cost_usd else ""),
    ]
    lines += _plan_and_cap(s, s.capped_calls, money)
    for sub in s.subagents:
        lines.append(f"  {sub.kind} {sub.name}: {plural(sub.calls, 'call')}, {money.text(sub.cost_usd)}")
    days = len({c.time[:10] for c in d.calls}) > 1  # calls of several days (a resumed session): dated
    rows = [
        [
            f"{c.time[:10]} {c.time[11:19]}" if days else c.time[11:19],
            c.model,
            c.agent,
            tokens(c.tokens.input),
            tokens(c.tokens.output),
            NOT_PAID.get(c.billing) or money.text(c.cost_usd, c.estimated),
            ", ".join(c.tools),
        ]
        for c in d.calls
    ]
    if rows:
        lines += ["", table(["time", "model", "agent", "in", "out", "cost", "tools"], rows, right={3, 4, 5})]
    return "\n".join(lines)


def history(r, money, budgets: dict[str, dict] | None = None) -> str:
    """`trayburn report`: one line per day (week, month, project, model, session, source) and a total;
    `budgets`: by project, each row's budget and the share of it spent ("$5.00 daily, 82 %")."""

    def cost(g) -> str:
        t = g.totals
        if covered := covered_by(t.calls, t.plan_calls, t.free_calls):
            return covered
        if t.calls and t.unpriced_calls >= t.calls:
            return "unpriced"
        tail = f" (+{t.unpriced_calls} unpriced)" if t.unpriced_calls else ""
        return money.text(t.cost_usd, bool(t.estimated_usd)) + tail

    def line(g) -> list[str]:
        t = g.totals.tokens
        name = f"{shorten(g.label, 40)} ({g.key})" if r.by == "session" else shorten(g.label, 48)
        return [name, str(g.sessions), f"{g.totals.calls:,}", tokens(t.input), tokens(t.output), cost(g)]

    head = f"{r.period.since} to {r.period.until} ({r.timezone}), by {r.by}"
    rows = [line(g) for g in r.rows] + [line(r.total)]
    rows[-1][0] = "total"
    columns = [r.by, "sessions", "calls", "in", "out", "cost"]
    if budgets:
        columns.append("budget")
        for g, row in zip(r.rows, rows, strict=False):
            b = budgets.get(g.key)
            row.append(f"{money.cents(b['budget_usd'])} {b['which']}, {b['share'] * 100:.0f} %" if b else "")
        rows[-1].append("")
    body = table(columns, rows, right={1, 2, 3, 4, 5})
    lines = [head, "", body]
    if r.total.totals.estimated_usd:
        lines.append(f"* includes {money.text(r.total.totals.estimated_usd)} estimated from tokens (no cost reported)")
    if money.note:
        lines.append(f"({money.note})")
    return "\n".join(lines)


def models_seen(models: list[SeenModel]) -> str:
    """`trayburn prices` with no model: the unpriced first, then how to add a price."""
    if not models:
        return "No model calls in the ledger yet."
    missing = [m for m in models if not m.priced]
    head = f"Models seen in the ledger: {len(models)}" + (f", {len(missing)} without a price" if missing else "")
    rows = [[m.name, ", ".join(m.ids), str(m.calls), tokens(m.tokens), _price_cell(m)] for m in models]
    lines = [head, "", table(["model", "ids", "calls", "tokens", "price"], rows, right={2, 3})]
    if missing:
        from .pricing.show import how_to_price  # (only `prices` lists models: not imported by `today`)

        lines += ["", *how_to_price(missing[0].key)]
    else:
        lines += ["", "Every model has a price; `trayburn prices MODEL` shows its rates and where they come from."]
    return "\n".join(lines)


def _price_cell(m: SeenModel) -> str:
    if m.priced:
        return ", ".join(m.sources)
    where = "" if m.unpriced_routes == [""] else f" on {', '.join(r or 'no route' for r in m.unpriced_routes)}"
    return f"none{where} ({plural(m.unpriced_calls, 'call')} unpriced)"


# ---- sharing between machines ------------------------------------------------------------------------


def machines_line(m: MachinesReport, today: bool = True, money: Money = USD) -> str:
    """The day's split by machine under `today`'s text ('' while no other machine is held)."""
    line = m.menu_line(money.text, "Today" if today else "That day")
    if line is None:
        return ""
    return "\n\n" + line + "\n" + machines_table(m, money)


def machines_table(m: MachinesReport, money: Money = USD) -> str:
    """Spend by machine as a table (`today`, and `report --by machine`)."""
    rows = [[x.name + (" (this one)" if x.this else "") + (" (file gone)" if x.file_gone else ""), str(x.calls),
             cost_cell(x.cost_usd, x.estimated_cost_usd, x.unpriced_calls, x.calls, money=money)]
            for x in m.machines]  # fmt: skip
    return table(["machine", "calls", "cost"], rows, right={1, 2})


NO_DATA_KINDS = ("not_installed", "no_sessions_folder", "no_sessions", "sessions_not_a_folder", "override_missing")


def no_data_line(h: Health) -> str:
    """Under a day with no call, when trayburn holds no session at all: why (doctor's verdict) and the demo."""
    if h.kind not in NO_DATA_KINDS or h.sessions:
        return ""
    return f"\n{h.verdict}. `trayburn doctor` says where trayburn looks; `trayburn demo` shows it on recorded sessions."


def incomplete_line(progress: tuple[int, int] | None) -> str:
    """While history is still being read: what the figure covers (nothing once every session is read)."""
    if progress is None:
        return ""
    read, total = progress
    return (
        f"\nStill reading history: {read:,} of {total:,} sessions so far; the figure covers those"
        " (run again, or `trayburn sessions --all`, to finish)"
    )


def sync_lines(sync: dict) -> list[str]:
    """doctor's part on sharing (from `SyncHealth.to_json()`)."""
    if not sync.get("sync_dir"):
        return ["Sharing:         off (set sync_dir to share figures between machines)"]
    titles = "titles and paths shared" if sync.get("titles") else "figures and project names only"
    lines = [
        f"Sharing:         {sync['sync_dir']}  ({titles})",
        f"  this machine:  {sync.get('machine_name')} (id {sync.get('machine_id')})",
    ]
    if sync.get("problem"):
        lines.append(f"  not shared: {sync['problem']}")
    if sync.get("renamed"):
        lines.append(f"  new id: {sync['renamed']}")
    for m in sync.get("machines", []):
        who = f"{m.get('name') or '?'}{' (this one)' if m.get('this') else ''}"
        if m.get("gone"):
            state = "file gone; its history is kept" if not m.get("this") else "not written yet"
        else:
            age = m.get("age_s")
            state = (f"written {_age(age)} ago" if age is not None else "") + (
                f", format {m['version']} (trayburn {m.get('trayburn')})" if m.get("version") else ""
            )
        state += f", {plural(m.get('calls') or 0, 'call')} counted"
        lines.append(f"  {who:24} {m['path']}  {state}")
        if m.get("problem"):
            lines.append(f"    problem: {m['problem']}")
    return lines


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


def attribution(a: Attribution, money: Money = USD) -> str:
    """`trayburn report --by tool|agent`: a row per tool (a shell tool's programs indented under it) or per agent,
    and the total; by tool, the rule it follows (an attribution, not a measurement)."""

    def cost(s: Share) -> str:
        return cost_cell(s.nano / 1e9, s.estimated_usd, s.unpriced_calls, s.calls, money=money)

    def row(s: Share, indent: str = "") -> list[str]:
        name = indent + shorten(s.label, 40 - len(indent))
        if a.by == "agent":
            return [name, s.role, ", ".join(s.models), f"{s.calls:,}", cost(s)]
        return [name, f"{s.calls:,}", f"{s.uses:,}", cost(s)]

    rows = []
    for s in a.rows:
        rows.append(row(s))
        rows += [row(c, "  ") for c in s.under]
    total = row(a.total)
    total[0] = "total"
    if a.by == "agent":
        total[1:3] = ["", ""]
    rows.append(total)
    if a.by == "agent":
        body = table(["agent", "role", "models", "calls", "cost"], rows, right={3, 4})
    else:
        body = table(["tool", "calls", "uses", "cost"], rows, right={1, 2, 3})
    scope = f"session {a.session_id}" if a.session_id else f"{a.since} to {a.until} ({a.timezone})"
    lines = [f"{scope}, by {a.by}", "", body]
    if a.rule:
        lines.append(a.rule)
    if a.total.estimated_usd:
        lines.append(f"* includes {money.text(a.total.estimated_usd)} estimated from tokens (no cost reported)")
    return "\n".join(lines)


def cache_line(c: CacheReport, money: Money = USD) -> str | None:
    """'Cache: 4.5M of 5.0M input tokens read from cache (89%), saving $1.33 at list price'; None without input."""
    t = c.total
    if not t.input_tokens or t.hit_share is None:
        return None
    saved = "an unknown amount (a model without a price)" if t.saved_usd is None else money.text(t.saved_usd)
    line = f"Cache: {tokens(t.cache_read_tokens)} of {tokens(t.input_tokens)} input tokens read from cache"
    return f"{line} ({t.hit_share:.0%}), saving {saved} at list price"


def what_if_line(w: WhatIf, money: Money = USD) -> str:
    """'What if (not spend): these 94 calls on Claude Sonnet 4.5 at list price would cost $3.06 (spent $0.33)'."""
    spent = money.text(w.spend_usd) + (f", +{w.spend_unpriced_calls} unpriced" if w.spend_unpriced_calls else "")
    head = f"What if (not spend): these {plural(w.calls, 'call')} on {w.name} at list price"
    if w.cost_usd is None:
        return f"{head}: no price known for it on {', '.join(w.unpriced_routes) or 'any route'} (spent {spent})"
    tail = ""
    if w.unpriced_calls:
        tail = f"; {plural(w.unpriced_calls, 'call')} left out: no price for it on {', '.join(w.unpriced_routes)}"
    return f"{head} would cost {money.text(w.cost_usd)} (spent {spent}){tail}"
