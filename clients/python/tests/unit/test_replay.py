"""GetReplayHistory responses as typed results."""

from __future__ import annotations

import dataclasses
import json

import pytest

from toolhistory.replay import ReplayHistory, replay_history_of
from toolhistory.v1 import toolhistory_pb2 as pb

CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "-3"}


def response() -> pb.GetReplayHistoryResponse:
    call = pb.ToolCall(tool_call_id="call_1", tool_name="get_weather", arguments_json="{}", result="-3")
    return pb.GetReplayHistoryResponse(
        turns=[
            pb.Turn(
                run_id="r1",
                assistant_message_id="a1",
                after_message_id="u1",
                status=pb.RUN_STATUS_COMPLETED,
                rounds=[pb.Round(round_index=0, calls=[call])],
                messages_json=json.dumps([CALL, RESULT]),
            ),
            # A structured-view turn carries no messages_json.
            pb.Turn(run_id="r2", status=pb.RUN_STATUS_FAILED, after_message_id="u2"),
            pb.Turn(run_id="r3", assistant_message_id="a3", messages_json=json.dumps([RESULT])),
        ],
        omitted=[pb.Omission(run_id="r2", tool_call_id="x", reason=pb.OMISSION_REASON_RUN_FAILED)],
        history_tokens=42,
        pending_approvals=[pb.PendingApproval(tool_call_id="call_refund", tool_name="refund", arguments_json="{}")],
    )


def test_parses_each_turns_messages_and_keeps_the_rest_as_the_service_sent_it() -> None:
    raw = response()
    history = replay_history_of(raw, "openai")
    assert history.format == "openai"
    assert [(t.run_id, t.assistant_message_id, t.after_message_id, t.status) for t in history.turns] == [
        ("r1", "a1", "u1", pb.RUN_STATUS_COMPLETED),
        ("r2", "", "u2", pb.RUN_STATUS_FAILED),
        ("r3", "a3", "", pb.RUN_STATUS_UNSPECIFIED),
    ]
    assert [t.messages for t in history.turns] == [[CALL, RESULT], [], [RESULT]]
    assert history.turns[0].rounds == list(raw.turns[0].rounds)
    assert history.turns[0].raw == raw.turns[0]
    assert history.omitted == list(raw.omitted)
    assert history.pending_approvals == list(raw.pending_approvals)
    assert history.history_tokens == 42
    assert history.raw is raw


def test_messages_are_every_turns_messages_in_order() -> None:
    assert replay_history_of(response(), "openai").messages() == [CALL, RESULT, RESULT]
    assert replay_history_of(pb.GetReplayHistoryResponse(), "gemini").messages() == []


def test_is_frozen() -> None:
    history = replay_history_of(response(), "anthropic")
    with pytest.raises(dataclasses.FrozenInstanceError):
        history.history_tokens = 0  # type: ignore[misc]
    assert isinstance(history, ReplayHistory)


def test_refuses_messages_json_that_is_no_array() -> None:
    broken = pb.GetReplayHistoryResponse(turns=[pb.Turn(run_id="r9", messages_json='{"role":"tool"}')])
    with pytest.raises(ValueError, match="messages_json of run 'r9' is not a JSON array"):
        replay_history_of(broken, "openai")
