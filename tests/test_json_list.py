"""A long JSON list (`sessions --all --json`) is printed one item at a time (`render.json_list`): the same bytes
as the whole list written at once, for any items, so the streaming changes nothing a reader can see."""

from __future__ import annotations

import json

import pytest

from trayburn import render

ITEMS = [
    {"id": "a", "title": 'two\nlines and a "quote"', "models": [], "subagents": [{"name": "x", "calls": 2}]},
    {"id": "é", "cost_usd": 0.1, "tokens": {"input": 1, "output": 2}, "nested": [[1, [2, {"k": None}]]]},
    {},
    [],
    "a string",
]


@pytest.mark.parametrize("count", [0, 1, 2, len(ITEMS)])
def test_the_list_streamed_is_the_list_written_at_once(count):
    items = ITEMS[:count]
    assert "".join(render.json_list(iter(items))) == render.as_json(items)


def test_a_name_that_is_not_utf8_is_escaped_in_its_item():
    items = [{"folder": "/home/\udcff"}, {"folder": "/home/é"}]
    text = "".join(render.json_list(items))
    text.encode("utf-8")  # printable anywhere
    assert json.loads(text) == items


def test_a_figure_that_is_not_finite_is_refused():
    with pytest.raises(ValueError):
        "".join(render.json_list([{"cost_usd": 1.0}, {"cost_usd": float("nan")}]))


@pytest.mark.parametrize("count", [0, 1, len(ITEMS)])
def test_a_document_with_its_list_streamed_is_the_document_written_at_once(count):
    doc = {"since": "2026-11-01", "by": "session", "rows": ITEMS[:count], "total": {"calls": 3, "tokens": {"a": 1}}}
    assert "".join(render.json_with_list({**doc, "rows": []}, "rows", ITEMS[:count])) == render.as_json(doc)
