"""The recording core replays the shared trace vectors (libs/contract/test-vectors/recorded-runs.json) byte for byte, as
the TypeScript core does: framework-neutral steps, and the exact events they publish."""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from toolhistory._recording import (
    AskedCall,
    FailedRunEnd,
    RecordedCall,
    ResponseReasoning,
    RunEnd,
    RunRecording,
    ToolOutcome,
    WaitingRun,
    decision_on,
    result_of,
    resumed_call_position,
    waiting_run,
)
from toolhistory.events import PublishedEvent, RunFailure, RunScope, TokenUsage
from toolhistory.publisher import PendingEvent, RunPublisher, prepare_events
from toolhistory.v1 import toolhistory_pb2 as pb

VECTORS = Path(__file__).parent.joinpath("../../../../libs/contract/test-vectors").resolve()
REFUSAL = "refused by the broker"

OPTIONS = {
    "afterFailedStep": "after_failed_step",
    "firstRoundIndex": "first_round_index",
    "decidedBy": "decided_by",
    "citedSourcesFromAnswer": "cited_sources_from_answer",
    "finishReason": "finish_reason",
    "finishReasonAfterTools": "finish_reason_after_tools",
    "finishReasonAwaitingApproval": "finish_reason_awaiting_approval",
}


class _Position:
    def __init__(self, pending: dict[str, Any]) -> None:
        self.tool_call_id: str = pending["toolCallId"]
        self.round_index: int = pending["roundIndex"]
        self.sequence_index: int = pending["sequenceIndex"]


def _usage(usage: dict[str, Any] | None) -> TokenUsage | None:
    return None if usage is None else TokenUsage(usage["inputTokens"], usage["outputTokens"], usage.get("model"))


def _reasoning(reasoning: dict[str, Any] | None) -> ResponseReasoning | None:
    if reasoning is None:
        return None
    return ResponseReasoning(
        provider=reasoning["provider"],
        model=reasoning["model"],
        items=reasoning.get("items", ()),
        call_signatures=reasoning.get("callSignatures", {}),
        call_item_ids=reasoning.get("callItemIds", {}),
    )


def _perform(recording: RunRecording, step: dict[str, Any]) -> Future[Any] | None:
    at = step.get("at")
    kind = step["step"]
    if kind == "modelResponse":
        asked = [AskedCall(c["toolCallId"], c["toolName"], c["arguments"]) for c in step.get("calls", [])]
        round_ = recording.response(
            calls=asked,
            usage=_usage(step.get("usage")),
            text=step.get("text"),
            message_id=step.get("messageId"),
            reasoning=_reasoning(step.get("reasoning")),
            occurred_at=at,
        )
        return None if round_ is None else recording.publish_calls(round_.calls, at)
    if kind == "toolResult":
        call = recording.calls.open(step["toolCallId"])
        assert call is not None, step
        recording.calls.answer(call)
        return recording.publish_results([result_of(call, ToolOutcome(step["result"], step.get("isError", False)))], at)
    if kind == "approvalRequested":
        latest = recording.calls.latest(step["toolCallId"])
        assert latest is not None, step
        return recording.publish_approval_request(latest, step.get("reason"), at)
    if kind == "resumedCall":
        placed = resumed_call_position(
            step["toolCallId"], pending_approvals=[_Position(p) for p in step["pendingApprovals"]]
        )
        assert placed is not None, step
        position, _ = placed
        recording.calls.add_earlier(
            RecordedCall(position.round_index, position.sequence_index, step["toolCallId"], step["toolName"])
        )
        return None
    if kind == "approvalDecided":
        latest = recording.calls.latest(step["toolCallId"])
        assert latest is not None, step
        decision = decision_on(latest, step["approved"], step.get("reason"))
        return recording.publish_decision(decision, step.get("decidedBy"), at)
    if kind == "complete":
        return recording.complete(
            RunEnd(
                assistant_message_id=step.get("assistantMessageId"),
                finish_reason=step.get("finishReason"),
                stopped_for_approval=step.get("stoppedForApproval"),
                occurred_at=at,
            )
        )
    assert kind == "fail", step
    return recording.fail(FailedRunEnd(RunFailure(step["error"]["code"], step["error"]["message"]), occurred_at=at))


def _replay(vector: dict[str, Any], run: dict[str, Any]) -> list[str]:
    scope = RunScope(**{_snake(key): value for key, value in run["scope"].items()})
    limits = vector["limits"]
    now = datetime.fromisoformat(vector["now"].replace("Z", "+00:00"))
    events: list[str] = []
    refusing = False

    def send(pending: list[PendingEvent]) -> list[PublishedEvent]:
        if refusing:
            raise RuntimeError(REFUSAL)
        prepared = prepare_events(
            scope,
            pending,
            max_event_bytes=limits["maxEventBytes"],
            max_result_chars=limits.get("maxResultChars"),
            now=now,
        )
        events.extend(event.value for event in prepared)
        return [PublishedEvent(event.event_id, event.type, 0, len(events)) for event in prepared]

    options = {OPTIONS[key]: value for key, value in vector.get("options", {}).items()}
    recording = RunRecording(RunPublisher(scope, send), **options)
    for step in run["steps"]:
        refusing = step.get("refused", False)
        published = _perform(recording, step)
        # A refused step fails its own future; what follows it is the policy's business, which the vector shows.
        if published is not None:
            with contextlib.suppress(Exception):
                published.result(timeout=10)
        refusing = False
    return events


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


_VECTORS: list[dict[str, Any]] = json.loads(VECTORS.joinpath("recorded-runs.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", _VECTORS, ids=[vector["description"] for vector in _VECTORS])
def test_the_recording_core_publishes_each_vectors_events_byte_for_byte(vector: dict[str, Any]) -> None:
    for run in vector["runs"]:
        assert _replay(vector, run) == run["events"]


def _listed(run_id: str, call_id: str, round_index: int, sequence_index: int, arguments: str) -> Any:
    return pb.PendingApproval(
        run_id=run_id,
        tool_call_id=call_id,
        tool_name="refund",
        arguments_json=arguments,
        round_index=round_index,
        sequence_index=sequence_index,
    )


@pytest.mark.parametrize(
    ("pending", "turns", "expected"),
    [
        pytest.param([], [], None, id="nothing waits"),
        pytest.param([_listed("other", "c1", 0, 0, "{}")], [], None, id="another run's call waits"),
        pytest.param(
            [_listed("r1", "c1", 1, 0, '{"amount": 5}'), _listed("other", "c9", 4, 0, "{}")],
            [],
            WaitingRun((RecordedCall(1, 0, "c1", "refund", {"amount": 5}),), 2),
            id="one call: the run goes on after its round",
        ),
        pytest.param(
            [_listed("r1", "c1", 0, 0, "{}"), _listed("r1", "c2", 0, 1, "not json")],
            [pb.Turn(run_id="r1", rounds=[pb.Round(round_index=0), pb.Round(round_index=3)])],
            WaitingRun(
                (RecordedCall(0, 0, "c1", "refund", {}), RecordedCall(0, 1, "c2", "refund", {"_raw": "not json"})),
                4,
            ),
            id="two calls of a round; a later round replayed",
        ),
    ],
)
def test_a_waiting_run_as_the_replay_lists_it(
    pending: list[Any], turns: list[Any], expected: WaitingRun | None
) -> None:
    assert waiting_run("r1", pending, turns) == expected
