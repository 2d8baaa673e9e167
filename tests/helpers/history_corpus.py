"""A hand-made multi-day corpus in Cline's format: several days, projects and sources (cli, vscode,
desktop), a subagent, a session across midnight, a fork that copies its parent's calls, a rollup-only
session, an unpriced model and a title made to trouble a CSV. `CALLS` is what a correct reader counts,
written down as the files are made, for sums that owe nothing to trayburn."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .corpus import assistant, make_session, ms, user

TITLE_TROUBLE = '=HYPERLINK("x"), a "quoted", comma\nand a second line'


@dataclass(frozen=True)
class Expect:
    session: str
    day: str  # UTC day
    project: str
    source: str
    model: str
    agent: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None
    at_ms: int = 0  # when the call was made


def build(sessions: Path) -> list[Expect]:
    calls: list[Expect] = []

    def session(sid, start, project_path, source, msgs, *, use_cwd=False, agents=None, **fields):
        where = {"cwd": project_path, "workspace_root": ""} if use_cwd else {"workspace_root": project_path}
        make_session(sessions, sid, start, msgs, agents=agents, source=source, **where, **fields)

    def call(sid, mid, when, project, source, model, tokens, cost=None, agent="lead"):
        i, o, cr, cw = tokens
        calls.append(Expect(sid, when[:10], project, source, model, agent, i, o, cr, cw, cost, ms(when)))
        extra = {} if cost is None else {"cost": cost}
        return assistant(mid, ms(when), i, o, cr, cw, model=model, **extra)

    a = "1796000000000_alph1"
    a_msgs = [
        user("u1", ms("2026-11-02T09:00:00Z")),
        call(a, "msg_a0000001", "2026-11-02T09:00:05Z", "alpha", "cli", "gpt-4o", (1200, 30, 0, 0), 0.0042),
        call(a, "msg_a0000002", "2026-11-02T09:01:00Z", "alpha", "cli", "gpt-4o", (2400, 60, 1000, 0), 0.0081),
        call(a, "msg_a0000003", "2026-11-03T10:00:00Z", "alpha", "cli", "deepseek-chat", (5000, 90, 0, 0), 0.0),
    ]
    session(a, "2026-11-02T08:59:00.000Z", "/home/me/code/alpha", "cli", a_msgs)

    b = "1796100000000_beta2"
    b_msgs = [
        call(b, "msg_b0000001", "2026-11-03T12:00:00Z", "beta", "vscode", "claude-sonnet-4-5", (9000, 400, 4000, 2000)),
        call(b, "msg_b0000002", "2026-11-04T08:00:00Z", "beta", "vscode", "claude-sonnet-4-5", (3000, 100, 0, 0)),
    ]
    session(
        b,
        "2026-11-03T11:59:00.000Z",
        "C:\\Users\\me\\beta",
        "vscode",
        b_msgs,
        use_cwd=True,
        metadata={"title": TITLE_TROUBLE},
    )

    c = "1796200000000_night"
    c_msgs = [
        call(c, "msg_c0000001", "2026-11-09T23:50:00Z", "gamma", "desktop", "my-local-model", (800, 20, 0, 0)),
        call(c, "msg_c0000002", "2026-11-10T00:10:00Z", "gamma", "desktop", "gpt-4o", (1500, 40, 0, 0), 0.0051),
    ]
    sub = [
        call(
            c,
            "msg_c0000s01",
            "2026-11-10T00:05:00Z",
            "gamma",
            "desktop",
            "gpt-4o",
            (700, 15, 0, 0),
            0.002,
            agent="subagent",
        )
    ]
    session(
        c,
        "2026-11-09T23:49:00.000Z",
        "/srv/gamma",
        "desktop",
        c_msgs,
        agents={"agent_x7Qp.messages.json": ("subagent", sub)},
    )

    d = "1796300000000_alph2"  # another folder called alpha: the same project
    d_msgs = [call(d, "msg_d0000001", "2026-11-16T15:00:00Z", "alpha", "vscode", "gpt-4o", (4000, 80, 0, 0), 0.011)]
    session(d, "2026-11-16T14:59:00.000Z", "/other/place/alpha", "vscode", d_msgs)

    fork = "1796400000000_fork1"  # copies alpha's first two calls (ids and metrics): counted once, for alpha
    f_msgs = [
        *a_msgs[:3],
        call(fork, "msg_f0000001", "2026-11-17T09:00:00Z", "alpha", "cli", "gpt-4o", (1000, 10, 0, 0), 0.003),
    ]
    session(
        fork,
        "2026-11-17T08:59:00.000Z",
        "/home/me/code/alpha",
        "cli",
        f_msgs,
        metadata={"title": "fork", "fork": {"forkedFromSessionId": a}},
    )

    r = "1796500000000_rollp"  # no per-message metrics: one call from metadata.usage
    usage = {"inputTokens": 600, "outputTokens": 12, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 0.0017}
    make_session(
        sessions,
        r,
        "2026-11-18T07:00:00.000Z",
        [user("u-r", ms("2026-11-18T07:00:01Z"))],
        source="jetbrains",
        workspace_root="/w/delta",
        metadata={"title": "rollup", "usage": usage},
    )
    calls.append(Expect(r, "2026-11-18", "delta", "jetbrains", "gpt-4o", "lead", 600, 12, 0, 0, 0.0017))
    return calls


def sums(calls: list[Expect]) -> tuple:
    """(calls, input, output, cache_read, cache_write, reported cost)."""
    return (
        len(calls),
        sum(c.input for c in calls),
        sum(c.output for c in calls),
        sum(c.cache_read for c in calls),
        sum(c.cache_write for c in calls),
        sum(c.cost for c in calls if c.cost is not None),
    )
