"""The parser, rule by rule (docs/formats/cline-cli.md, "What a reader must get right"), on the real
corpus and on the hand-made files in tests/data/quirks/. Bytes in, facts out: no files opened
by the code under test."""

from __future__ import annotations

import contextlib
import json
import math

import pytest
from helpers.corpus import CORPUS, QUIRKS, TOKEN_FIELDS, assistant, dumps, expected_sessions, manifest, messages_doc, ms
from hypothesis import given, settings
from hypothesis import strategies as st

from trayburn.sources.cline_cli.parse import IDLESS, ParseError, parse_manifest, parse_messages, to_ms

T = 1796026733527  # the timestamp the quirk files are built around


def quirk(name: str) -> bytes:
    return (QUIRKS / name).read_bytes()


def by_key(data: bytes, sid: str = "S") -> dict:
    return {c.key: c for c in parse_messages(data, sid).calls}


# ---- the real corpus ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sid", sorted(expected_sessions()))
def test_every_recorded_messages_file_matches_expected(sid):
    """Calls and token sums per file equal EXPECTED.json (which adds tokens as stored)."""
    for wanted in expected_sessions()[sid]["message_files"]:
        data = (CORPUS / "data" / "sessions" / sid / wanted["file"]).read_bytes()
        got = parse_messages(data, sid)
        assert got.agent == wanted["agent"]
        assert len(got.calls) == wanted["calls"]
        sums = [sum(getattr(c, f) for c in got.calls) for f in ("input", "output", "cache_read", "cache_write")]
        assert sums == [wanted[f] for f in TOKEN_FIELDS]
        assert sum(c.cost or 0 for c in got.calls) == pytest.approx(wanted["cost"], abs=1e-9)


def test_recorded_manifest_fields():
    sid = "1796026750424_j6crs"
    m = parse_manifest((CORPUS / "data" / "sessions" / sid / f"{sid}.json").read_bytes())
    raw = json.loads((CORPUS / "data" / "sessions" / sid / f"{sid}.json").read_text())
    assert m.id == sid
    assert m.started_ms == ms(raw["started_at"]) and m.ended_ms == ms(raw["ended_at"])
    assert (m.status, m.model, m.provider, m.source) == (raw["status"], raw["model"], raw["provider"], "cli")
    assert m.messages_path == raw["messages_path"]
    usage = raw["metadata"]["usage"]
    assert (m.rollup.input, m.rollup.output, m.rollup.cost) == (
        usage["inputTokens"],
        usage["outputTokens"],
        usage["totalCost"],
    )


def test_killed_session_manifest_has_no_rollup():
    """SIGKILL leaves no metadata.usage: nothing to fall back on."""
    sid = "1796026882505_9kqtu"
    m = parse_manifest((CORPUS / "data" / "sessions" / sid / f"{sid}.json").read_bytes())
    assert m.rollup is None and m.ended_ms is not None and m.status == "failed"


# ---- rule 1: which messages are calls; token fields -------------------------------------------------


def test_rule1_one_call_per_assistant_message_with_nonzero_metrics():
    calls = by_key(quirk("messages/rule1_calls.messages.json"))
    assert sorted(calls) == ["msg_A", "msg_D", "msg_E", "msg_F", "msg_G", "msg_H"]


def test_rule1_token_fields_that_are_not_nonnegative_numbers_count_zero():
    calls = by_key(quirk("messages/rule1_calls.messages.json"))
    assert (calls["msg_D"].input, calls["msg_D"].output, calls["msg_D"].cache_read) == (0, 20, 0)  # strings
    assert (calls["msg_F"].input, calls["msg_F"].output, calls["msg_F"].cache_read, calls["msg_F"].cache_write) == (
        0,
        7,
        0,
        0,
    )  # negative, null, boolean
    assert (calls["msg_G"].input, calls["msg_G"].output) == (12, 3)
    assert (calls["msg_H"].input, calls["msg_H"].cache_read, calls["msg_H"].output) == (0, 0, 3)  # absurd sizes


def test_rule1_a_cost_alone_makes_a_call():
    call = by_key(quirk("messages/rule1_calls.messages.json"))["msg_E"]
    assert (call.input, call.output, call.cost) == (0, 0, 0.01)


# ---- rule 2: identity --------------------------------------------------------------------------------


def test_rule2_key_is_the_message_id():
    sid = "1796026733097_tvgzu"
    data = (CORPUS / "data" / "sessions" / sid / f"{sid}.messages.json").read_bytes()
    assert [c.key for c in parse_messages(data, sid).calls] == ["msg_hXZrvnEW"]
    assert [c.key for c in parse_messages(data, "another-session").calls] == ["msg_hXZrvnEW"]


def test_rule2_messages_without_id_keyed_by_content_and_original_index():
    calls = parse_messages(quirk("messages/odd_shapes.messages.json"), "S").calls
    assert [c.seq for c in calls] == [3, 4, 5]  # stray entries 0-2 keep their places
    assert [c.input for c in calls] == [100, 200, 300]
    assert all(c.key.startswith(IDLESS) for c in calls) and len({c.key for c in calls}) == 3
    renamed = parse_messages(quirk("messages/odd_shapes.messages.json"), "S-renamed").calls
    assert [c.key for c in renamed] == [c.key for c in calls]  # a renamed copy keys alike: counted once
    other_file = parse_messages(quirk("messages/odd_shapes.messages.json"), "S/agent_1.messages.json").calls
    assert not {c.key for c in other_file} & {c.key for c in calls}  # another file of the session: its own


def test_rule2_index_keys_do_not_depend_on_the_decoder_path():
    """A document the fast decoder accepts and the same one with an odd entry (slow path) key alike."""
    msgs = [assistant(None, T, 100, 1), assistant(None, T + 1, 200, 2)]
    for m in msgs:
        del m["id"]
    plain = parse_messages(dumps(messages_doc("S", msgs)), "S").calls
    odd = parse_messages(dumps(messages_doc("S", msgs + ["odd"])), "S").calls
    assert [c.key for c in plain] == [c.key for c in odd]
    assert len({c.key for c in plain}) == 2


# ---- rule 3: cost --------------------------------------------------------------------------------


def test_rule3_reported_cost_used_as_is_zero_included():
    calls = by_key(quirk("messages/rule3_costs.messages.json"))
    assert calls["msg_zero"].cost == 0.0 and calls["msg_zero"].cost is not None
    assert calls["msg_reported"].cost == 0.0123


@pytest.mark.parametrize("key", ["msg_missing", "msg_negative", "msg_string", "msg_null", "msg_bool"])
def test_rule3_unusable_cost_means_estimate(key):
    assert by_key(quirk("messages/rule3_costs.messages.json"))[key].cost is None


# ---- rule 4: model --------------------------------------------------------------------------------


def test_rule4_model_from_model_info_else_left_for_the_manifest():
    data = dumps(
        messages_doc(
            "S", [assistant("a", T, model="z-ai/glm-5.2"), assistant("b", T, model=None), assistant("c", T, model="  ")]
        )
    )
    calls = by_key(data)
    assert (calls["a"].model, calls["b"].model, calls["c"].model) == ("z-ai/glm-5.2", None, None)


@pytest.mark.parametrize("odd", [False, True])  # True: a document the typed decoder refuses (generic path)
def test_rule4_provider_from_model_info_else_left_for_the_manifest(odd):
    routed = assistant("a", T, model="claude-sonnet-4")
    routed["modelInfo"]["provider"] = "openrouter"
    blank = assistant("b", T)
    blank["modelInfo"]["provider"] = " "
    extra = [{"role": "system", "content": 1}] if odd else []
    calls = by_key(dumps(messages_doc("S", [routed, blank, assistant("c", T, model=None), *extra])))
    assert (calls["a"].provider, calls["b"].provider, calls["c"].provider) == ("openrouter", None, None)


# ---- rule 5: time --------------------------------------------------------------------------------


def test_rule5_timestamps():
    calls = by_key(quirk("messages/rule5_times.messages.json"))
    for key in ("ts_ms", "ts_iso_z", "ts_iso_offset", "ts_iso_naive", "ts_seconds_float"):
        assert calls[key].ts_ms == T, key
    assert calls["ts_seconds"].ts_ms == T // 1000 * 1000
    for key in ("ts_missing", "ts_zero", "ts_garbage", "ts_negative", "ts_null"):
        assert calls[key].ts_ms is None, key  # the ledger uses the session's start


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e300, True, [], {}, ""])
def test_rule5_unusable_times(value):
    assert to_ms(value) is None


# ---- rule 6: rollup ------------------------------------------------------------------------------


def test_rule6_rollup_from_usage_never_aggregate_usage():
    raw = json.loads(quirk("manifests/rollup.json"))
    usage = raw["metadata"]["usage"]
    r = parse_manifest(quirk("manifests/rollup.json")).rollup
    assert (r.input, r.output, r.cache_read, r.cache_write, r.cost) == (
        usage["inputTokens"],
        usage["outputTokens"],
        usage["cacheReadTokens"],
        usage["cacheWriteTokens"],
        usage["totalCost"],
    )
    assert r.key.endswith(":rollup") and r.ts_ms is None and r.model is None


def test_rule6_rollup_without_total_cost_is_estimated():
    assert parse_manifest(quirk("manifests/rollup_no_cost.json")).rollup.cost is None


def test_rule6_aggregate_usage_alone_is_no_rollup():
    assert parse_manifest(quirk("manifests/aggregate_only.json")).rollup is None


# ---- rule 9 and content shapes ----------------------------------------------------------------------


def test_rule9_tool_names_in_order_and_odd_content():
    calls = by_key(quirk("messages/tools.messages.json"))
    assert calls["msg_tools"].tools == ("run_commands", "read_files", "team_run_task")
    assert calls["msg_after"].tools == ("spawn_agent",)
    assert calls["msg_odd_content"].tools == ()


def test_recorded_parallel_tool_calls_are_one_call():
    sid = "1796026905011_qfraa"
    data = (CORPUS / "data" / "sessions" / sid / f"{sid}.messages.json").read_bytes()
    first = parse_messages(data, sid).calls[0]
    assert first.tools == ("run_commands", "run_commands")


# ---- document shapes --------------------------------------------------------------------------------


def test_bare_array_document():
    got = parse_messages(quirk("messages/bare_array.messages.json"), "S")
    assert got.agent == "lead"
    assert [(c.key, c.input, c.output, c.cost) for c in got.calls] == [
        ("msg_bare1", 300, 3, None),
        ("msg_bare2", 400, 4, 0.002),
    ]


def test_old_layout_usage_on_last_message_is_one_call():
    calls = parse_messages(quirk("messages/old_layout.messages.json"), "S").calls
    assert [(c.key, c.input, c.output, c.cache_read, c.cache_write, c.cost) for c in calls] == [
        ("msg_old3", 9000, 300, 2000, 500, 0.042)
    ]


def test_subagent_and_teammate_kinds():
    sid = "1796026755302_hw751"
    data = (CORPUS / "data" / "sessions" / sid / "worker__XR6qTq.messages.json").read_bytes()
    assert parse_messages(data, sid).agent == "teammate"
    sid = "1796026750424_j6crs"
    data = (CORPUS / "data" / "sessions" / sid / "agent_1796026750829_e5vdgr.messages.json").read_bytes()
    assert parse_messages(data, sid).agent == "subagent"


def test_fork_manifest():
    m = parse_manifest(quirk("manifests/fork.json"))
    assert m.forked_from == "1796026733097_tvgzu"
    assert m.messages_path.startswith("/elsewhere/")


# ---- broken input: ParseError, never anything else ----------------------------------------------------


def _real_messages() -> bytes:
    sid = "1796026740928_n4h5j"
    return (CORPUS / "data" / "sessions" / sid / f"{sid}.messages.json").read_bytes()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   \n",
        b"\x00\x01\x02binary\xff",
        b"\xff\xfe{",
        b"[" * 100_000,
        b'{"messages": ' + b"[" * 100_000,
        b"null",
        b"42",
        b'"text"',
        b'{"messages": null}',
        b'{"messages": {}}',
    ],
    ids=[
        "empty",
        "blank",
        "binary",
        "bad-utf8",
        "deep",
        "deep-in-messages",
        "null",
        "number",
        "string",
        "messages-null",
        "messages-object",
    ],
)
def test_broken_messages_raise_parse_error(data):
    with pytest.raises(ParseError):
        parse_messages(data, "S")


@pytest.mark.parametrize("cut", [1, 4096, 0.5, -2])
def test_messages_cut_mid_write_raise_parse_error(cut):
    data = _real_messages()
    n = cut if isinstance(cut, int) and cut > 0 else int(len(data) * cut) if cut > 0 else len(data) + cut
    with pytest.raises(ParseError):
        parse_messages(data[:n], "S")


def test_old_content_with_new_tail_is_not_valid():
    """A shorter rewrite caught before its truncate: new content followed by the old tail."""
    old = _real_messages()
    new = dumps(messages_doc("S", [assistant("only", T)]))
    assert len(new) < len(old)
    with pytest.raises(ParseError):
        parse_messages(new + old[len(new) :], "S")


@pytest.mark.parametrize(
    "data",
    [b"", b"[]", b"[1, 2]", b'"x"', b"{", b"{" * 100_000, b'{"a": 1e400}'],
    ids=["empty", "array", "list", "string", "cut", "deep", "huge-number"],
)
def test_broken_manifest(data):
    if data == b'{"a": 1e400}':
        assert parse_manifest(data).id == ""  # valid enough: an object
        return
    with pytest.raises(ParseError):
        parse_manifest(data)


def test_manifest_with_odd_values():
    doc = manifest("S", "not a date", status=7, model=["x"], metadata="nope", messages_path=3)
    m = parse_manifest(dumps(doc))
    assert (m.started_ms, m.status, m.model, m.messages_path, m.rollup) == (None, "unknown", None, None, None)


def test_describes_the_problem():
    with pytest.raises(ParseError, match="empty"):
        parse_messages(b"", "S")
    with pytest.raises(ParseError, match="binary"):
        parse_messages(b"\x00\x00garbage", "S")
    with pytest.raises(ParseError, match="mid-write"):
        parse_messages(_real_messages()[:100], "S")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_raise_parse_error(data):
    for parse in (lambda d: parse_messages(d, "S"), parse_manifest):
        with contextlib.suppress(ParseError):
            parse(data)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "role",
                    "ts",
                    "metrics",
                    "modelInfo",
                    "content",
                    "inputTokens",
                    "outputTokens",
                    "cost",
                    "type",
                    "name",
                    "messages",
                    "agent",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_any_json_shape_parses_or_raises_parse_error(doc):
    for wrapped in (doc, {"messages": doc}, {"messages": [doc]}, {"messages": [{"role": "assistant", "metrics": doc}]}):
        try:
            got = parse_messages(json.dumps(wrapped).encode(), "S")
        except ParseError:
            continue
        for c in got.calls:
            assert all(0 <= v <= 2**53 for v in (c.input, c.output, c.cache_read, c.cache_write))
            assert c.cost is None or c.cost >= 0


# ---- hardening: whatever a file holds, what comes out is storable and displayable --------------------

CONTROL = assistant("msg_control", T, 1234, 56, 7, 8, cost=0.25, tools=("read_files",))


def _control_counted(calls: dict) -> None:
    c = calls["msg_control"]
    assert (c.ts_ms, c.input, c.output, c.cache_read, c.cache_write, c.cost, c.tools, c.note) == (
        T,
        1234,
        56,
        7,
        8,
        0.25,
        ("read_files",),
        None,
    )


def _storable(text: str) -> bool:
    text.encode("utf-8")  # raises on a lone surrogate, as SQLite's binding does
    return True


def test_lone_surrogates_become_storable_and_ids_stay_distinct():
    odd = [
        assistant("msg_\ud83d", T, model="gpt-\ud83d", tools=("run_\udc00", "ok")),
        assistant("msg_\ud83e", T, model="\ud83d\ude00 pair"),  # a pair written as two escapes is a real character
        assistant(None, T),  # keyed by its content, in a scope that may carry a surrogate from a folder's name
    ]
    data = dumps(messages_doc("S", [*odd, CONTROL], agent="lead\udc80"))
    assert b"\\ud83d" in data  # as JSON escapes, the only way a file can hold them
    got = parse_messages(data, "S\udcff/agent_\udcfe.messages.json")
    calls = {c.key: c for c in got.calls}
    idless = [k for k in calls if k.startswith(IDLESS)]
    assert len(idless) == 1 and set(calls) - set(idless) == {"msg_\\ud83d", "msg_\\ud83e", "msg_control"}
    assert calls["msg_\\ud83d"].model == "gpt-\ufffd" and calls["msg_\\ud83d"].tools == ("run_\ufffd", "ok")
    assert calls["msg_\\ud83e"].model == "\U0001f600 pair"
    assert got.agent == "lead\ufffd"
    for c in got.calls:
        assert all(_storable(s) for s in (c.key, c.model or "", *c.tools))
    _control_counted(calls)
    again = parse_messages(data, "S\udcff/agent_\udcfe.messages.json").calls
    assert [c.key for c in again] == [c.key for c in got.calls]  # stable


def test_lone_surrogates_in_a_manifest():
    doc = manifest("S\ud800", "2026-11-30T07:27:31.238Z", cwd="/w/\udcff", model="m\ud83d", source="cli\ud83d")
    doc["metadata"] = {"title": "hi \ud83d there", "fork": {"forkedFromSessionId": "P\ud83d"}}
    m = parse_manifest(dumps(doc))
    assert (m.id, m.title, m.cwd, m.model, m.forked_from) == (
        "S\\ud800",
        "hi \ufffd there",
        "/w/\ufffd",
        "m\ufffd",
        "P\\ud83d",
    )
    assert m.started_ms == ms("2026-11-30T07:27:31.238Z")  # the control field


@pytest.mark.parametrize(
    "value",
    [
        300000000000,  # seconds: year 11476
        253402300800,  # seconds: 10000-01-01
        253402300800000,  # ms: 10000-01-01
        "0001-01-01T00:00:00+14:00",  # before the epoch in every zone
        "9999-12-31T23:59:59-14:00",  # after 9999 in UTC
        "3000-01-01T00:00:00Z",  # past what Windows' localtime shows
        "1970-01-01T00:00:00Z",
        -1,
        86_399,  # seconds: still 1970-01-01, local time shows 1969 west of Greenwich
    ],
)
def test_times_local_time_cannot_show_are_missing(value):
    assert to_ms(value) is None
    data = dumps(messages_doc("S", [assistant("odd", value), CONTROL]))
    calls = by_key(data)
    assert calls["odd"].ts_ms is None  # the ledger then uses the session's start
    _control_counted(calls)


@pytest.mark.parametrize("field", ["started_at", "ended_at"])
@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+14:00", 253402300800, "10000-01-01", 300000000000])
def test_manifest_times_local_time_cannot_show_are_missing(field, value):
    doc = manifest("S", "2026-11-30T07:27:31.238Z", ended_at="2026-11-30T08:00:00.000Z")
    m = parse_manifest(dumps(doc | {field: value}))
    assert getattr(m, field.replace("_at", "_ms")) is None
    other = "ended_ms" if field == "started_at" else "started_ms"
    assert getattr(m, other) == ms(doc[other.replace("_ms", "_at")])  # the control field


def test_the_edges_of_the_displayable_range():
    from datetime import datetime

    from trayburn.sources.base import MAX_MS, MIN_MS

    assert to_ms(MIN_MS // 1000) == MIN_MS and to_ms(MIN_MS // 1000 - 1) is None  # seconds below 1e12
    assert to_ms(MAX_MS) == MAX_MS and to_ms(MAX_MS + 1) is None
    for edge in (MIN_MS, MAX_MS):  # displayable in the zones furthest from UTC
        for hours in (-12, 14):
            datetime.fromtimestamp(edge / 1000 + hours * 3600)


@pytest.mark.parametrize("depth", [1200, 20_000, 200_000])
def test_a_valid_file_with_deeply_nested_tool_input_parses(depth):
    """What trayburn promises, whatever CPython's recursion limits (they moved in 3.12 and 3.13): a file whose
    tool input nests thousands of levels deep parses, its calls counted. The bytes are built by hand (the
    stdlib's json.dumps may or may not write them, by version)."""
    head = dumps(messages_doc("S", [CONTROL, assistant("deep", T, tools=("editor",)), CONTROL | {"id": "after"}]))
    deep = b"[" * depth + b'"leaf"' + b"]" * depth
    data = head.replace(b'"input": {}', b'"input": ' + deep, 1)
    assert data.count(b"[") > depth
    calls = by_key(data)
    assert list(calls) == ["msg_control", "deep", "after"] and calls["deep"].tools == ("editor",)
    assert calls["deep"].seq == 1 and calls["after"].seq == 2
    _control_counted(calls)
    with pytest.raises(ParseError, match="mid-write"):  # the same file cut short is still refused
        parse_messages(data[: len(data) // 2], "S")
    manifest_data = dumps(manifest("S", "2026-11-30T07:27:31.238Z")).replace(b'"pid": 1', b'"pid": ' + deep, 1)
    assert parse_manifest(manifest_data).id == "S"


def _depth(node) -> int:
    """How many containers deep a value nests."""
    if isinstance(node, dict):
        return 1 + max(map(_depth, node.values()), default=0)
    if isinstance(node, list):
        return 1 + max(map(_depth, node), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(json_values, st.integers(min_value=0, max_value=6))
def test_shallow_agrees_with_json(doc, depth):
    """`shallow` accepts exactly what json.loads accepts and cuts only below `depth`."""
    from trayburn.sources.cline_cli.parse import shallow

    data = json.dumps(doc).encode()
    got = json.loads(shallow(data, depth))
    assert got == doc if _depth(doc) <= depth else _depth(got) <= depth
    for cut in (1, len(data) // 2, len(data) - 1):
        for extra in (b"}", b",", b'"', b"]"):
            broken = data[:cut] + extra + data[cut:]
            try:
                json.loads(broken)
            except ValueError:
                with pytest.raises(ValueError):
                    shallow(broken, depth)


@pytest.mark.parametrize("cost", [1e308, 10_000.01, 2**70, float("inf"), float("nan"), -1.0])
def test_absurd_costs_are_set_aside_with_a_reason(cost):
    data = json.dumps(messages_doc("S", [assistant("odd", T, cost=cost), assistant("odd2", T, cost=cost), CONTROL]))
    calls = by_key(data.encode())
    for key in ("odd", "odd2"):
        assert calls[key].cost is None and "estimated instead" in calls[key].note and calls[key].input == 1000
    total = sum(c.cost or 0 for c in calls.values())
    assert math.isfinite(total) and total == 0.25
    _control_counted(calls)


def test_absurd_costs_count_as_calls_even_without_tokens():
    """Spend was reported, so the call is kept (with its note); a cost that is not a number at all
    is as if absent (rule 3), and with no tokens there is no call (rule 1)."""
    zero = {"inputTokens": 0, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    msgs = [assistant("big", T, metrics=zero | {"cost": 1e308}), assistant("text", T, metrics=zero | {"cost": "9"})]
    calls = by_key(json.dumps(messages_doc("S", [*msgs, CONTROL])).encode())
    assert set(calls) == {"big", "msg_control"} and calls["big"].note.startswith("reported cost 1e+308 is over")
    _control_counted(calls)


def test_a_cost_at_the_cap_is_used():
    from trayburn.sources.base import MAX_COST

    calls = by_key(dumps(messages_doc("S", [assistant("big", T, cost=MAX_COST), CONTROL])))
    assert calls["big"].cost == MAX_COST and calls["big"].note is None


def test_an_absurd_rollup_cost_is_set_aside():
    usage = {"inputTokens": 10, "outputTokens": 1, "cacheReadTokens": 0, "cacheWriteTokens": 0, "totalCost": 1e308}
    r = parse_manifest(dumps(manifest("S", "2026-11-30T07:27:31.238Z", metadata={"usage": usage}))).rollup
    assert (r.input, r.cost) == (10, None) and "over $10,000" in r.note


odd_text = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(), max_size=6)
odd_number = st.one_of(
    st.floats(),  # NaN and ±Infinity included: json.dumps writes them as Python's json reads them
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([300000000000, 253402300800, 253402300800000, 1e308, 10_000.0, 10_000.5]),
)
odd_time = odd_number | st.sampled_from(["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "x"]) | odd_text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {"id": odd_text, "ts": odd_time, "model": odd_text, "tool": odd_text, "cost": odd_number, "n": odd_number}
        ),
        max_size=5,
    ),
    odd_text,
)
def test_whatever_a_file_holds_calls_are_storable_displayable_and_finite(rows, sid):
    from trayburn.sources.base import MAX_COST, MAX_MS, MIN_MS

    msgs = [
        assistant(r["id"], r["ts"], r["n"], r["n"], cost=r["cost"], model=r["model"], tools=(r["tool"],)) for r in rows
    ]
    data = json.dumps(messages_doc("S", [*msgs, CONTROL])).encode()
    calls = parse_messages(data, sid).calls
    assert calls[-1].key == "msg_control" and calls[-1].cost == 0.25  # the control is always counted
    for c in calls:
        for text in (c.key, c.model or "", *c.tools):
            text.encode("utf-8")
        assert c.ts_ms is None or MIN_MS <= c.ts_ms <= MAX_MS
        assert c.cost is None or (math.isfinite(c.cost) and 0 <= c.cost <= MAX_COST)
        assert all(0 <= v <= 2**53 for v in (c.input, c.output, c.cache_read, c.cache_write))
