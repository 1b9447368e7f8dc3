"""Events checked before they are sent, by the contract the service applies, naming each field and rule."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory.errors import InvalidToolEventError
from toolhistory.validation import MAX_JSON_DEPTH, event_problems, is_date_time, serialize_valid_event

VECTORS = Path(__file__).parent.joinpath("../../../../libs/contract/test-vectors").resolve()
SAMPLES: dict[str, list[dict[str, Any]]] = json.loads(VECTORS.joinpath("contract-samples.json").read_text("utf-8"))
CALL: dict[str, Any] = next(
    sample["event"] for sample in SAMPLES["valid"] if sample["description"] == "ToolCallRequested"
)
RESULT: dict[str, Any] = next(
    sample["event"] for sample in SAMPLES["valid"] if sample["description"] == "ToolResultReceived"
)
FAILED: dict[str, Any] = next(sample["event"] for sample in SAMPLES["valid"] if sample["description"] == "RunFailed")


def problems_of(event: dict[str, Any]) -> list[str]:
    try:
        serialize_valid_event(event)
    except InvalidToolEventError as error:
        return error.problems
    return []


def nested(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    deepest = root
    for _ in range(levels - 1):
        deepest["child"] = {}
        deepest = deepest["child"]
    return root


@pytest.mark.parametrize("sample", SAMPLES["valid"], ids=lambda sample: sample["description"])
def test_accepts_the_contracts_valid_samples(sample: dict[str, Any]) -> None:
    assert event_problems(sample["event"]) == []
    assert json.loads(serialize_valid_event(sample["event"])) == sample["event"]


@pytest.mark.parametrize("sample", SAMPLES["invalid"], ids=lambda sample: sample["description"])
def test_refuses_the_contracts_invalid_samples_naming_the_field(sample: dict[str, Any]) -> None:
    problems = problems_of(sample["event"])
    assert problems
    assert sample["field"] in "; ".join(problems)


def test_names_a_missing_field_as_required_and_lists_every_problem() -> None:
    event = {key: value for key, value in CALL.items() if key != "toolName"}
    event.update(roundIndex=-1, tenantId="")
    assert problems_of(event) == [
        "tenantId must NOT have fewer than 1 characters",
        "toolName is required",
        "roundIndex must be >= 0",
    ]


def test_words_problems_as_the_typescript_client_does() -> None:
    assert problems_of({**RESULT, "toolCallId": 7}) == ["toolCallId must be string"]
    assert problems_of({**RESULT, "result": None}) == ["result must NOT be valid"]
    assert problems_of({**FAILED, "schemaVersion": 3}) == ["schemaVersion must be equal to one of the allowed values"]
    assert problems_of({**FAILED, "occurredAt": "2026-02-30T10:15:30Z"}) == ['occurredAt must match format "date-time"']


def test_a_boolean_is_no_number() -> None:
    assert problems_of({**CALL, "roundIndex": True, "schemaVersion": True}) == [
        "schemaVersion must be equal to one of the allowed values",
        "roundIndex must be integer",
    ]


def test_patterns_match_as_in_javascript() -> None:
    # Python's `$` matches before a final newline and its `\d` matches any digit; the service's do neither.
    assert problems_of({**FAILED, "eventId": CALL["eventId"] + "\n"})[0].startswith("eventId must match pattern")
    assert "occurredAt" in problems_of({**FAILED, "occurredAt": "2026-11-02T10:15:30Z\n"})[0]
    assert "occurredAt" in problems_of({**FAILED, "occurredAt": "٢٠٢٦-11-02T10:15:30Z"})[0]


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("2028-02-29T00:00:00Z", True),
        ("2026-02-29T00:00:00Z", False),
        ("2100-02-29T00:00:00Z", False),
        ("2026-04-31T00:00:00Z", False),
        ("2026-11-02T24:00:00Z", False),
        ("2026-11-02T12:15:30.5+02:00", True),
        ("2026-11-02T12:15:30+24:00", False),
        ("2026-12-31T23:59:60Z", True),
        ("2027-01-01T00:59:60+01:00", True),
        ("2026-12-31T22:59:60Z", False),
        ("2026-11-02T10:15:30", False),
        ("2026-11-02", False),
    ],
)
def test_date_times_are_checked_as_the_service_checks_them(text: str, valid: bool) -> None:
    assert is_date_time(text) is valid


def test_refuses_arguments_nested_deeper_than_64_levels() -> None:
    assert problems_of({**CALL, "arguments": nested(MAX_JSON_DEPTH)}) == []
    assert problems_of({**CALL, "arguments": nested(MAX_JSON_DEPTH + 1)}) == [
        "arguments must not nest deeper than 64 levels"
    ]


def test_a_cyclic_payload_is_refused_not_walked_forever() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    assert problems_of({**RESULT, "result": cycle}) == ["result must not nest deeper than 64 levels"]


def test_refuses_values_that_are_not_json_naming_where_they_are() -> None:
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    event = {**CALL, "arguments": {"when": when, "items": [1, (2, 3)], "score": math.nan, 3: "three"}}
    assert problems_of(event) == [
        "arguments must have string keys (got int 3)",
        "arguments.when must be a JSON value (got datetime)",
        "arguments.items.1 must be a JSON value (got tuple)",
        "arguments.score must be a finite number (JSON has no nan)",
    ]


def test_many_values_that_are_not_json_are_summed_up() -> None:
    problems = problems_of({**RESULT, "result": [object() for _ in range(25)]})
    assert len(problems) == 11
    assert problems[-1] == "result holds 15 more values that are not JSON"


def test_refuses_an_event_larger_than_the_service_accepts() -> None:
    [problem] = problems_of({**RESULT, "result": "x" * 1024 * 1024})
    assert re.fullmatch(r"event is \d+ bytes, larger than the limit of 1048576 bytes", problem)


def test_returns_the_json_it_checked() -> None:
    assert json.loads(serialize_valid_event(FAILED)) == FAILED


json_payloads = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=30,
)


@given(json_payloads.filter(lambda payload: payload is not None))
def test_any_json_result_is_valid(payload: Any) -> None:
    assert event_problems({**RESULT, "result": payload}) == []


@given(st.dictionaries(st.text(), json_payloads, max_size=6))
def test_any_json_object_is_valid_arguments(arguments: dict[str, Any]) -> None:
    assert event_problems({**CALL, "arguments": arguments}) == []
