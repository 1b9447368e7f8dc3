"""ToolHistorySession's pure parts: a saved batch split by model response, a failed call's output as the SDK sent it.

The session itself runs against the service and the SDK's own SQLiteSession (tests/integration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory.openai_agents._session import _calls_follow, _outputs_as_sent, _replayed_key, _rounds
from toolhistory.v1 import toolhistory_pb2 as pb


def call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "lookup", "arguments": "{}"}


def output(call_id: str, text: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def reasoning(item_id: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": []}


def said(item_id: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": "On it."}]
    return {"type": "message", "role": "assistant", "id": item_id, "content": content}


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([call("a"), call("b"), output("a"), output("b")], [["a", "b", "a", "b"]]),
        ([call("a"), output("a"), call("b"), output("b")], [["a", "a"], ["b", "b"]]),
        ([reasoning("r1"), call("a"), output("a"), reasoning("r2"), call("b")], [["r1", "a", "a"], ["r2", "b"]]),
        ([call("a"), call("b")], [["a", "b"]]),
        ([output("a")], [["a"]]),
        (
            [said("m1"), call("a"), output("a"), reasoning("r2"), said("m2"), call("b")],
            [["m1", "a", "a"], ["r2", "m2", "b"]],
        ),
    ],
    ids=[
        "parallel calls",
        "two responses in one batch",
        "reasoning opens its response",
        "awaiting",
        "a resumed output",
        "the text beside the calls opens its response",
    ],
)
def test_a_batch_splits_by_model_response(items: list[dict[str, Any]], expected: list[list[str]]) -> None:
    assert [[item.get("call_id") or item["id"] for item in group] for group in _rounds(items)] == expected


@pytest.mark.parametrize(
    ("items", "at", "expected"),
    [
        ([said("m"), call("a")], 0, True),
        ([said("m"), reasoning("r"), call("a")], 0, True),
        ([said("m")], 0, False),
        ([said("m"), output("a"), call("b")], 0, False),
        ([call("a"), output("a"), said("m")], 2, False),
    ],
    ids=["calls follow", "past its reasoning", "the answer", "an output first", "after the outputs"],
)
def test_an_assistant_message_is_text_beside_calls_when_its_response_asked_for_calls(
    items: list[dict[str, Any]], at: int, expected: bool
) -> None:
    assert _calls_follow(items, at) is expected


KINDS = st.sampled_from(["call", "output", "reasoning"])


@given(st.lists(KINDS, max_size=12))
def test_every_item_stays_in_order_and_no_response_starts_after_an_output_of_its_own(kinds: list[str]) -> None:
    makers = {"call": call, "output": output, "reasoning": reasoning}
    items = [makers[kind](str(at)) for at, kind in enumerate(kinds)]
    groups = _rounds(items)
    assert [item for group in groups for item in group] == items
    for group in groups:
        first_output = next((at for at, item in enumerate(group) if item["type"] == "function_call_output"), len(group))
        assert all(item["type"] == "function_call_output" for item in group[first_output:])


@dataclass
class Turn:
    messages: list[Any]
    rounds: list[pb.Round] = field(default_factory=list)


def replayed(*calls: pb.ToolCall) -> Turn:
    return Turn(
        messages=[
            {"type": "function_call_output", "call_id": c.tool_call_id, "output": f"[error] {c.result}"} for c in calls
        ],
        rounds=[pb.Round(round_index=0, calls=list(calls))],
    )


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        (pb.ToolCall(tool_call_id="a", result="An error occurred.", is_error=True), "An error occurred."),
        (pb.ToolCall(tool_call_id="a", result="ok"), "[error] ok"),
        (pb.ToolCall(tool_call_id="a", result="notice", is_error=True, interrupted=True), "[error] notice"),
        (pb.ToolCall(tool_call_id="a", result="notice", is_error=True, expired=True), "[error] notice"),
        (pb.ToolCall(tool_call_id="a", result="notice", is_error=True, invalidated_by="b"), "[error] notice"),
        (
            pb.ToolCall(tool_call_id="a", result="denied", is_error=True, approval=pb.APPROVAL_STATUS_DENIED),
            "[error] denied",
        ),
    ],
    ids=["a failure as sent", "no failure", "interrupted", "expired", "invalidated", "denied"],
)
def test_a_failed_calls_output_comes_back_as_the_sdk_sent_it_unless_the_service_replaced_it(
    recorded: pb.ToolCall, expected: str
) -> None:
    [item] = _outputs_as_sent(replayed(recorded))
    assert item["output"] == expected


def text_beside_calls(text: str) -> dict[str, Any]:
    """A round's text as replayed: an assistant message with no id."""
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


# Popping a replayed item hides it in the session's view by this key: two items may share it only if they are the same.
DISTINCT_REPLAYED_ITEMS = [
    call("a"),
    output("a"),
    call("b"),
    reasoning("rs_1"),
    reasoning("rs_2"),
    text_beside_calls("I'll look it up."),
    text_beside_calls("Now the second order."),
]


def test_each_replayed_item_has_a_key_of_its_own() -> None:
    keys = [_replayed_key(item) for item in DISTINCT_REPLAYED_ITEMS]
    assert len(set(keys)) == len(keys)


def test_an_item_keeps_its_key_whatever_its_key_order() -> None:
    text = text_beside_calls("Checking.")
    assert _replayed_key(dict(reversed(list(text.items())))) == _replayed_key(text)
