"""A run's steps as the publisher's events: the one place that turns recorded calls, results and approvals into
RunPublisher calls (RunRecording puts them in order)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolhistory.errors import InvalidToolEventError
from toolhistory.events import ToolCall, ToolResult

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from toolhistory._recording._records import (
        RecordedCall,
        RecordedDecision,
        RecordedResponse,
        RecordedResult,
        RunRecord,
    )
    from toolhistory.events import PublishedEvent
    from toolhistory.publisher import RunPublisher


def _at(occurred_at: datetime | str | None) -> dict[str, Any]:
    """The event's time when the step says one (else the publisher's now): only then is it passed."""
    return {} if occurred_at is None else {"occurred_at": occurred_at}


class RecordingSteps:
    """A run's steps, published at once (blocking until the broker acknowledged them)."""

    def __init__(
        self,
        run: RunPublisher,
        *,
        decided_by: str | None = None,
        approval_reason: Callable[[RecordedCall], str | None] | None = None,
    ) -> None:
        self.run = run
        self._decided_by = decided_by
        self._approval_reason = approval_reason

    def model_response(
        self, response: RecordedResponse, round_index: int, occurred_at: datetime | str | None = None
    ) -> PublishedEvent:
        """The model's response that asked for a round's calls (ModelResponseReceived), before them: its text and
        reasoning state."""
        reasoning = response.reasoning
        bare: dict[str, Any] = {
            "round_index": round_index,
            "provider": reasoning.provider,
            "model": reasoning.model,
            **({"text": response.text} if response.text else {}),
            **_at(occurred_at),
        }
        state: dict[str, Any] = {
            **({"reasoning": list(reasoning.items)} if reasoning.items else {}),
            **({"call_signatures": dict(reasoning.call_signatures)} if reasoning.call_signatures else {}),
            **({"call_item_ids": dict(reasoning.call_item_ids)} if reasoning.call_item_ids else {}),
        }
        try:
            return self.run.model_response(**bare, **state)
        except InvalidToolEventError:
            # State the contract cannot carry (past the event's size, or too many items) is let go rather than the
            # run: the round replays without it, as a round of an earlier turn does.
            if not state:
                raise
            return self.run.model_response(**bare)

    def calls(self, calls: Sequence[RecordedCall], occurred_at: datetime | str | None = None) -> list[PublishedEvent]:
        """A round's calls (ToolCallRequested), in one request."""
        return self.run.tool_calls(
            [
                ToolCall(c.round_index, c.sequence_index, c.tool_call_id, c.tool_name, c.arguments, None, occurred_at)
                for c in calls
            ]
        )

    def results(
        self, results: Sequence[RecordedResult], occurred_at: datetime | str | None = None
    ) -> list[PublishedEvent]:
        """Results (ToolResultReceived), in one request; each names its tool (a resumed call's is another run's: the
        publisher learns it only here)."""
        return self.run.tool_results(
            [
                ToolResult(
                    r.round_index,
                    r.sequence_index,
                    r.tool_call_id,
                    r.result,
                    r.is_error,
                    r.tool_name or None,
                    None,
                    occurred_at,
                )
                for r in results
            ]
        )

    def approval_request(
        self, call: RecordedCall, reason: str | None = None, occurred_at: datetime | str | None = None
    ) -> PublishedEvent:
        """The call waits for a person's approval (ToolApprovalRequested): ``reason``, else the option's."""
        why = reason if reason is not None or self._approval_reason is None else self._approval_reason(call)
        return self.run.approval_requested(
            round_index=call.round_index,
            sequence_index=call.sequence_index,
            tool_call_id=call.tool_call_id,
            reason=why,
            **_at(occurred_at),
        )

    def decision(
        self, decision: RecordedDecision, decided_by: str | None = None, occurred_at: datetime | str | None = None
    ) -> PublishedEvent:
        """A person's answer (ToolApprovalDecided): who decided, else the option's."""
        return self.run.approval_decided(
            round_index=decision.round_index,
            sequence_index=decision.sequence_index,
            tool_call_id=decision.tool_call_id,
            approved=decision.approved,
            reason=decision.reason,
            decided_by=decided_by or self._decided_by,
            **_at(occurred_at),
        )

    def record(self, record: RunRecord) -> None:
        """A whole record, in order: the answers, the resumed calls' results, then each round's model response (when
        it carried reasoning), calls, results and approval requests (none for a call without an id: the contract
        names an approval's call by its id)."""
        for decision in record.decisions:
            self.decision(decision)
        if record.resumed_results:
            self.results(record.resumed_results)
        for round_ in record.rounds:
            if round_.response is not None:
                self.model_response(round_.response, round_.round_index)
            self.calls(round_.calls)
            if round_.results:
                self.results(round_.results)
            for call in round_.approval_requests:
                if call.tool_call_id:
                    self.approval_request(call)
