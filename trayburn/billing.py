"""How a call is billed — paid, covered by a plan, or free — from its route and model id, never from its cost
field: the one place the plan routes and the free model ids live. Never reads a file and never prices a call.

Why not the cost field (docs/formats/cline-cli.md, "Plan, free and paid routes"): the Cline CLI 3.0.57 to 3.0.65
write no `metrics.cost` on a ClinePass call, a free model's or a ChatGPT subscription's, other builds write a
positive one there (the CLI's own storage doc: a `cline-pass` call with `cost: 0.002108502`; 3.0.55 on
`cline-free/…`), and the editor extension writes 0. So what the cost field holds says nothing about what was paid:

- a call on a plan route is covered by that plan: $0 of spend; its tokens at list price are its API value;
- a call of a free model (`cline-free/…` on any route, `…:free` on Cline's own routes) is free: $0, and no price;
- any other call is paid: its reported cost, else trayburn's estimate.

The settings' `[billing]` table adds a route as a plan (one trayburn does not know yet) or counts a known plan
route as paid (a team that pays per call). Every source and figure asks `Billing.of`; a source that has no
settings (a parser deciding what a stored 0 means) asks the module's `kind`, the shipped rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

PAID, PLAN, FREE = "paid", "plan", "free"
SETTING_VALUES = (PLAN, PAID)  # what the settings' `[billing]` table may say of a route

# Routes a subscription covers (Cline's and Kilo's provider ids) → the plan's name for people. Cline's SDK marks
# the first three as subscription (`usageCostDisplay: "subscription"` in its provider metadata); the CLI shows no
# cost for the Claude Code provider (a Claude Pro/Max subscription) since 3.0.60; Kilo writes 0 on all but the first.
PLANS: dict[str, str] = {
    "cline-pass": "ClinePass",
    "openai-codex": "ChatGPT subscription",
    "openai-codex-cli": "Codex CLI",
    "claude-code": "Claude Code",
    "github-copilot": "GitHub Copilot",  # Kilo's (docs/formats/kilo7.md): a Copilot subscription, cost 0 written
}
FREE_PART = "cline-free"  # `cline-free/glm-5.2`: a model Cline offers free, whatever the route says
FREE_SUFFIX = ":free"  # `arcee-ai/trinity-large-preview:free`: free on Cline's own routes
FREE_ON = frozenset({"cline", "cline-pass"})


def route_of(provider: str | None, session_provider: str | None = None) -> str:
    """The route a call took: its own `modelInfo.provider`, else its session's; '' when neither says."""
    for value in (provider, session_provider):
        if value and value.strip() and value.strip().lower() != "unknown":
            return value.strip().lower()
    return ""


def free_model(model: str | None, route: str) -> bool:
    """Whether a model id is one of the free ones on this route (a `route_of()` value)."""
    text = (model or "").strip().lower()
    if not text:
        return False
    if FREE_PART in text.split("/")[:-1]:
        return True
    return text.endswith(FREE_SUFFIX) and route in FREE_ON


@dataclass(frozen=True)
class Billing:
    """The plan routes (route → the plan's name): the shipped ones with the settings' changes applied."""

    plans: Mapping[str, str] = field(default_factory=lambda: dict(PLANS))

    @classmethod
    def from_settings(cls, table: Mapping[str, str]) -> Billing:
        """The shipped plans, with the settings' `[billing]` routes added (`"plan"`) or removed (`"paid"`)."""
        plans = dict(PLANS)
        for raw, said in table.items():
            route = route_of(raw)
            if said == PLAN and route:
                plans.setdefault(route, raw.strip())
            elif said == PAID:
                plans.pop(route, None)
        return cls(plans)

    def of(self, route: str, model: str | None) -> str:
        """`"free"`, `"plan"` or `"paid"` for a call on `route` (a `route_of()` value) of `model` (its id as
        written): a free model first (free even on a plan), then the route."""
        if free_model(model, route):
            return FREE
        return PLAN if route in self.plans else PAID

    def name(self, route: str) -> str:
        """The plan's name for people ("ClinePass"); a route the settings added, as written there."""
        return self.plans.get(route, route)


SHIPPED = Billing()


def kind(provider: str | None, model: str | None) -> str:
    """The shipped rule for a call of `model` on `provider` (as a source writes it: `cline-pass`, `Cline`):
    `"free"`, `"plan"` or `"paid"`. For a source deciding what a stored cost means; figures use the settings'."""
    return SHIPPED.of(route_of(provider), model)
