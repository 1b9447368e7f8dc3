"""Payloads cut to fit, as the TypeScript client cuts them: the same JSON for the same event and limits."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolhistory._json import as_javascript_string, to_json, utf8_length, utf16_length
from toolhistory.errors import InvalidToolEventError
from toolhistory.truncation import (
    TRUNCATED_ARGUMENTS_KEY,
    TRUNCATION_TAIL,
    check_max_result_chars,
    cut_text,
    max_result_chars_problems,
    result_char_limit,
    serialize_fitted_event,
    truncation_marker,
)
from toolhistory.validation import event_problems, serialize_valid_event

if TYPE_CHECKING:
    from toolhistory.events import MaxResultChars

VECTORS = Path(__file__).parent.joinpath("../../../../libs/contract/test-vectors").resolve()
SAMPLES: dict[str, list[dict[str, Any]]] = json.loads(VECTORS.joinpath("contract-samples.json").read_text("utf-8"))
CALL: dict[str, Any] = next(
    sample["event"] for sample in SAMPLES["valid"] if sample["description"] == "ToolCallRequested"
)
RESULT: dict[str, Any] = next(
    sample["event"] for sample in SAMPLES["valid"] if sample["description"] == "ToolResultReceived"
)
MIB = 1024 * 1024


def fitted_event_vectors() -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = json.loads(VECTORS.joinpath("fitted-events.json").read_text("utf-8"))
    return vectors


def fit(event: dict[str, Any], limits: dict[str, Any]) -> str:
    return serialize_fitted_event(
        event, max_event_bytes=limits["maxEventBytes"], max_result_chars=limits.get("maxResultChars")
    )


def problems_of(event: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    try:
        fit(event, limits)
    except InvalidToolEventError as error:
        return error.problems
    return []


@pytest.mark.parametrize("vector", fitted_event_vectors(), ids=lambda vector: vector["description"])
def test_the_shared_vectors_give_the_typescript_clients_json(vector: dict[str, Any]) -> None:
    if "json" in vector:
        assert fit(vector["event"], vector["limits"]) == vector["json"]
    else:
        assert vector["error"] in "; ".join(problems_of(vector["event"], vector["limits"]))


def test_the_vectors_cover_each_way_an_event_is_sent() -> None:
    descriptions = " / ".join(vector["description"] for vector in fitted_event_vectors())
    for case in [
        "sent as it is",
        "string result over maxResultChars",
        "JSON object result over the byte limit",
        "arguments over the byte limit",
        "emoji at the cut point",
        "cannot fit",
    ]:
        assert case in descriptions


@pytest.mark.parametrize(
    ("text", "keep", "cut"),
    [
        ("abcdef", 3, "abc" + truncation_marker(3)),
        ("abcdef", 0, truncation_marker(6)),
        # Keeping 2 would split 😀 (two code units): it goes whole.
        ("a😀b", 2, "a" + truncation_marker(3)),
        ("a😀b", 3, "a😀" + truncation_marker(1)),
        ("x" * 5_000, 1_000, "x" * 1_000 + "…[truncated 4,000 chars]"),
    ],
)
def test_cut_text_keeps_that_many_utf16_code_units_and_the_marker(text: str, keep: int, cut: str) -> None:
    assert cut_text(text, keep) == cut


def test_the_marker_has_thousands_separators_and_the_tail_finds_it() -> None:
    assert truncation_marker(4_900) == "…[truncated 4,900 chars]"
    assert TRUNCATION_TAIL.search("abc…[truncated 1,234,567 chars]")
    assert not TRUNCATION_TAIL.search("abc…[truncated 12 chars]\n")


@pytest.mark.parametrize(
    ("option", "tool_name", "limit"),
    [
        (None, "fetch_page", None),
        (500, "fetch_page", 500),
        (500, None, 500),
        ({"defaults": 500, "tools": {"fetch_page": 20}}, "fetch_page", 20),
        ({"defaults": 500, "tools": {"fetch_page": 20}}, "get_order", 500),
        ({"defaults": 500, "tools": {"fetch_page": 20}}, None, 500),
        ({"tools": {"fetch_page": 20}}, "get_order", None),
    ],
)
def test_a_results_limit_is_its_tools_else_the_default(
    option: MaxResultChars | None, tool_name: str | None, limit: int | None
) -> None:
    assert result_char_limit(option, tool_name) == limit


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (0, "max_result_chars: must be a whole number of characters, 1 or more (got 0)"),
        (2.5, "max_result_chars: must be a whole number of characters, 1 or more (got 2.5)"),
        ("100", "max_result_chars: must be a whole number of characters, 1 or more (got '100')"),
        (True, "max_result_chars: must be a whole number of characters, 1 or more (got True)"),
        ({"default": 100}, "max_result_chars.default: unknown key (allowed: defaults, tools)"),
        ({"defaults": -1}, "max_result_chars.defaults: must be a whole number of characters, 1 or more (got -1)"),
        ({"tools": []}, "max_result_chars.tools: must be a mapping of tool names to their limits"),
        (
            {"tools": {"fetch_page": None}},
            "max_result_chars.tools.fetch_page: must be a whole number of characters, 1 or more (got None)",
        ),
    ],
)
def test_refuses_a_bad_max_result_chars(option: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        check_max_result_chars(option)


def test_names_every_bad_value_of_max_result_chars_at_once() -> None:
    assert max_result_chars_problems({"defaults": 0, "tools": {"a": 1, "b": "2", "c": -3}, "x": 1}) == [
        "max_result_chars.defaults: must be a whole number of characters, 1 or more (got 0)",
        "max_result_chars.tools.b: must be a whole number of characters, 1 or more (got '2')",
        "max_result_chars.tools.c: must be a whole number of characters, 1 or more (got -3)",
        "max_result_chars.x: unknown key (allowed: defaults, tools)",
    ]
    assert max_result_chars_problems(5_000) == []
    assert max_result_chars_problems({"defaults": 5_000, "tools": {"fetch_page": 200}}) == []


def test_sends_an_event_within_the_limits_exactly_as_it_is() -> None:
    for sample in SAMPLES["valid"]:
        assert serialize_fitted_event(sample["event"], max_event_bytes=MIB) == serialize_valid_event(sample["event"])


def test_cuts_a_3_mb_string_result_to_fit_1_mib_and_says_how_large_it_was() -> None:
    text = "lorem ipsum " * 250_000
    sent = serialize_fitted_event({**RESULT, "result": text}, max_event_bytes=MIB)
    event = json.loads(sent)
    assert MIB - 6 < utf8_length(sent) <= MIB
    assert event["originalBytes"] == 3_000_002
    kept = TRUNCATION_TAIL.sub("", event["result"])
    assert text.startswith(kept)
    assert event["result"] == kept + truncation_marker(len(text) - len(kept))


def test_cuts_arguments_into_one_key_so_they_stay_an_object() -> None:
    arguments = {"document": "é" * 600_000, "title": "notes"}
    event = json.loads(serialize_fitted_event({**CALL, "arguments": arguments}, max_event_bytes=MIB))
    assert list(event["arguments"]) == [TRUNCATED_ARGUMENTS_KEY]
    cut = event["arguments"][TRUNCATED_ARGUMENTS_KEY]
    assert cut.startswith('{"document":"ééé')
    assert re.search(r"é…\[truncated [\d,]+ chars\]\Z", cut)
    assert event["originalBytes"] == utf8_length(to_json(arguments))
    assert event["toolName"] == CALL["toolName"]


def test_leaves_a_result_at_max_result_chars_and_a_call_whatever_its_length_as_they_are() -> None:
    at_limit = {**RESULT, "result": "x" * 20}
    assert serialize_fitted_event(at_limit, max_event_bytes=MIB, max_result_chars=20) == serialize_valid_event(at_limit)
    long_call = {**CALL, "arguments": {"text": "x" * 100}}
    assert serialize_fitted_event(long_call, max_event_bytes=MIB, max_result_chars=20) == serialize_valid_event(
        long_call
    )


def test_refuses_an_invalid_event_whatever_its_size_naming_the_field() -> None:
    assert problems_of({**RESULT, "toolCallId": 7, "result": "x" * 2 * MIB}, {"maxEventBytes": MIB}) == [
        "toolCallId must be string"
    ]


# Characters whose JSON or UTF-8 takes more than one byte, surrogate pairs (whole, and as two code points) and lone
# surrogates among them.
units = st.one_of(
    st.sampled_from(["a", " ", '"', "\\", "\n", "\x07", "é", "€", "…", "😀", "\u2028", "\ud800", "\udfff", "\ud83d"]),
    st.characters(codec="utf-8"),
)
texts = st.lists(units, max_size=2_000).map("".join)
payloads = st.one_of(
    st.tuples(
        st.just("result"), st.one_of(texts, st.lists(texts, max_size=4), st.dictionaries(texts, texts, max_size=4))
    ),
    st.tuples(st.just("arguments"), st.dictionaries(texts, st.one_of(texts, st.integers()), max_size=4)),
)
limits = st.fixed_dictionaries(
    # From less than the envelope and a marker (refused) to more than most payloads (sent as they are).
    {"maxEventBytes": st.integers(min_value=250, max_value=3_000)},
    optional={"maxResultChars": st.integers(min_value=1, max_value=2_000)},
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(payloads, limits)
def test_an_event_is_sent_as_it_is_within_the_limits_else_cut_to_fit_when_the_marker_alone_fits_else_refused(
    payload: tuple[str, Any], limits: dict[str, int]
) -> None:
    field, value = payload
    event = {**RESULT, "result": value} if field == "result" else {**CALL, "arguments": value}
    original = as_javascript_string(value if isinstance(value, str) else to_json(value))
    char_limit = limits.get("maxResultChars") if field == "result" else None
    uncut = to_json(event)

    def wrap(cut: str) -> Any:
        return {TRUNCATED_ARGUMENTS_KEY: cut} if field == "arguments" else cut

    original_bytes = utf8_length(to_json(value))
    marker_alone = {**event, field: wrap(truncation_marker(utf16_length(original))), "originalBytes": original_bytes}

    if (char_limit is None or utf16_length(original) <= char_limit) and utf8_length(uncut) <= limits["maxEventBytes"]:
        # Byte for byte the event as it is.
        assert fit(event, limits) == uncut
        return
    if utf8_length(to_json(marker_alone)) > limits["maxEventBytes"]:
        assert re.match(r"event is \d+ bytes, larger than the limit", problems_of(event, limits)[0])
        return
    sent_json = fit(event, limits)
    assert utf8_length(sent_json) <= limits["maxEventBytes"]
    sent = json.loads(sent_json)
    assert event_problems(sent) == []
    assert sent["originalBytes"] == original_bytes
    if field == "arguments":
        assert list(sent["arguments"]) == [TRUNCATED_ARGUMENTS_KEY]
    cut = sent["result"] if field == "result" else sent["arguments"][TRUNCATED_ARGUMENTS_KEY]
    tail = TRUNCATION_TAIL.search(cut)
    assert tail is not None
    kept = cut[: tail.start()]
    assert tail.group() == truncation_marker(utf16_length(original) - utf16_length(kept))
    assert original.startswith(kept)
    assert utf16_length(kept) < utf16_length(original)
    # No surrogate pair is split: the character after the cut is never the low half of the last one kept.
    assert not (re.search("[\ud800-\udbff]\\Z", kept) and re.match("[\udc00-\udfff]", original[len(kept) :]))
    if char_limit is not None:
        assert utf16_length(kept) <= char_limit
    # A cut for size keeps all that fits: one more character (at most 6 bytes of JSON) would not.
    if char_limit is None or utf16_length(kept) < char_limit - 1:
        assert utf8_length(sent_json) > limits["maxEventBytes"] - 6
    # The rest of the event is as it was.
    rest = {key: item for key, item in sent.items() if key != "originalBytes"}
    assert to_json({**rest, field: value}) == uncut


@settings(max_examples=200, deadline=None)
@given(texts, limits)
def test_the_marker_is_there_if_and_only_if_the_payload_was_cut(value: str, limits: dict[str, int]) -> None:
    try:
        sent = json.loads(fit({**RESULT, "result": value}, limits))
    except InvalidToolEventError:
        return
    was_cut = sent["result"] != as_javascript_string(value)
    assert bool(TRUNCATION_TAIL.search(sent["result"])) == was_cut
    assert ("originalBytes" in sent) == was_cut
