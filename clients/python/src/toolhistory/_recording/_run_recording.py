"""The one way a run is recorded, whatever framework ran it."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from toolhistory._citations import cited_sources_from
from toolhistory._recording._calls import RecordedCalls
from toolhistory._recording._fit import bounded_usage
from toolhistory._recording._outbox import OrderedPublications, PublishFailure
from toolhistory._recording._records import RecordedResponse
from toolhistory._recording._steps import RecordingSteps
from toolhistory.events import RunFailure

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from toolhistory._recording._records import (
        AskedCall,
        RecordedCall,
        RecordedDecision,
        RecordedResult,
        RecordedRound,
        ResponseReasoning,
        RunRecord,
    )
    from toolhistory.events import PublishedEvent, TokenUsage
    from toolhistory.publisher import RunPublisher

T = TypeVar("T")

AfterFailedStep = Literal["publish-the-rest", "end-as-failed"]
"""What happens to a run's later steps once one could not be published: ``publish-the-rest`` publishes them (and the
end) as if nothing happened; ``end-as-failed`` skips them, and the run's end is RunFailed ``recording_failed`` (best
effort), so no half-recorded run looks complete."""

_RECORDING_FAILED = "recording_failed"


@dataclass(frozen=True)
class RunEnd:
    """How the run ended; every field has a default from what the run recorded."""

    assistant_message_id: str | None = None
    """Default: the last response's message id, else its response id, else the run id."""
    finish_reason: str | None = None
    """Default: the option's, else ``stop`` when the run answered, else as after tools or awaiting approval."""
    usage: Sequence[TokenUsage] | None = None
    """Default: the tokens of every model response seen; none when there are none; bounded to the contract's count."""
    answer_text: str | Callable[[], str | None] | None = None
    """The answer's text, for its cited sources (a function is asked only when they are recorded); default: the last
    response's text."""
    cited_sources: Sequence[int] | None = None
    """The source numbers the answer cites, when the adapter read them itself (default: read from the answer's text,
    when the recording is asked to)."""
    stopped_for_approval: bool | None = None
    """Default: the record published said so (else no)."""
    ended_after_tools: bool | None = None
    """Default: the last response seen asked for tools (or the record published says so)."""
    occurred_at: datetime | str | None = None


@dataclass(frozen=True)
class FailedRunEnd:
    """How the run failed."""

    error: RunFailure
    usage: Sequence[TokenUsage] | None = None
    """Default: the tokens of every model response seen (none when there are none)."""
    occurred_at: datetime | str | None = None


@dataclass(frozen=True)
class _Response:
    asked_for_tools: bool
    usage: TokenUsage | None
    text: str | None
    message_id: str | None
    response_id: str | None


class RunRecording:
    """The one way a run is recorded, whatever framework ran it: adapters map their framework's callbacks or items
    onto its steps.

    It numbers the rounds, finds a result's call, publishes every step in order (one after the other, whichever
    callback or thread asked: each step method returns the step's future), ends the run exactly once with the finish
    reason, usage and cited sources the run earned, and says when all of it is acknowledged (``settled()``).
    Publishing blocks, on the recording's own worker thread: wait for a future with ``.result()`` (from a worker
    thread) or ``asyncio.wrap_future`` (from async code).
    """

    def __init__(
        self,
        run: RunPublisher,
        *,
        after_failed_step: AfterFailedStep = "publish-the-rest",
        first_round_index: int = 0,
        decided_by: str | None = None,
        approval_reason: Callable[[RecordedCall], str | None] | None = None,
        cited_sources_from_answer: bool = False,
        finish_reason: str | None = None,
        finish_reason_after_tools: str = "tool_limit",
        finish_reason_awaiting_approval: str | None = None,
        on_publish_error: Callable[[PublishFailure], None] | None = None,
    ) -> None:
        self.run = run
        self.calls = RecordedCalls(first_round_index)
        self.steps = RecordingSteps(run, decided_by=decided_by, approval_reason=approval_reason)
        self._after_failed_step = after_failed_step
        self._cited_sources_from_answer = cited_sources_from_answer
        self._finish_reason = finish_reason
        self._after_tools = finish_reason_after_tools
        self._awaiting_approval = finish_reason_awaiting_approval or finish_reason_after_tools
        self._outbox = OrderedPublications(on_publish_error)
        self._lock = threading.Lock()
        self._responses: list[_Response] = []
        self._record: tuple[bool, bool] | None = None
        self._end: Future[PublishedEvent | None] | None = None

    @property
    def ended(self) -> bool:
        """Whether the run's end was asked for (RunCompleted or RunFailed)."""
        return self._end is not None

    @property
    def failed(self) -> bool:
        """Whether a step could not be published so far."""
        return self._outbox.failed

    @property
    def usage(self) -> list[TokenUsage]:
        """The tokens of each model response seen, in order."""
        return [response.usage for response in self._responses if response.usage is not None]

    def response(
        self,
        *,
        calls: Sequence[AskedCall] = (),
        usage: TokenUsage | None = None,
        text: str | None = None,
        message_id: str | None = None,
        response_id: str | None = None,
        reasoning: ResponseReasoning | None = None,
        occurred_at: datetime | str | None = None,
    ) -> RecordedRound | None:
        """A model call returned: its tokens and text are kept, and its calls (if any) are the next round, numbered,
        not yet published.

        With `reasoning` (the state a reasoning model handed back with the calls), the round's ModelResponseReceived
        (its text and this) is published now, before the round's calls, so that replay can give it back; the round
        returned carries it as `response`. `occurred_at`: when the model answered (default: when it is published).
        """
        self._responses.append(_Response(bool(calls), usage, text, message_id, response_id))
        round_ = self.calls.open_round(calls)
        if round_ is None or reasoning is None:
            return round_
        recorded = RecordedResponse(reasoning=reasoning, text=text)
        round_index = round_.round_index
        # Queued now, so it goes before the round's calls whoever publishes them; a failure is the outbox's to report.
        self._step(
            f"ModelResponseReceived round {round_index}",
            lambda: self.steps.model_response(recorded, round_index, occurred_at),
        )
        return replace(round_, response=recorded)

    def publish_calls(
        self, calls: Sequence[RecordedCall], occurred_at: datetime | str | None = None
    ) -> Future[list[PublishedEvent] | None]:
        """Publishes a round's calls (ToolCallRequested), in one request."""
        return self._step(_describe("ToolCallRequested", calls), lambda: self.steps.calls(calls, occurred_at))

    def publish_results(
        self, results: Sequence[RecordedResult], occurred_at: datetime | str | None = None
    ) -> Future[list[PublishedEvent] | None]:
        """Publishes results (ToolResultReceived), in one request; each answers its call."""
        return self._step(_describe("ToolResultReceived", results), lambda: self.steps.results(results, occurred_at))

    def publish_approval_request(
        self, call: RecordedCall, reason: str | None = None, occurred_at: datetime | str | None = None
    ) -> Future[PublishedEvent | None] | None:
        """Publishes that the call waits for a person's approval (ToolApprovalRequested), with ``reason``, else the
        option's. Nothing for a call without an id: the contract names an approval's call by its id."""
        if not call.tool_call_id:
            return None
        return self._step(
            _describe("ToolApprovalRequested", [call]), lambda: self.steps.approval_request(call, reason, occurred_at)
        )

    def publish_decision(
        self, decision: RecordedDecision, decided_by: str | None = None, occurred_at: datetime | str | None = None
    ) -> Future[PublishedEvent | None] | None:
        """Publishes a person's answer to the call (ToolApprovalDecided), possibly a call of an earlier run. Nothing
        for a call without an id."""
        if not decision.tool_call_id:
            return None
        return self._step(
            _describe("ToolApprovalDecided", [decision]), lambda: self.steps.decision(decision, decided_by, occurred_at)
        )

    def note_record(self, record: RunRecord) -> None:
        """Notes what a record (a framework that keeps the run, read once it returned) says of how the run stopped: the
        defaults of its end. The record itself is published in the end's turn (``steps.record(record)`` in the
        function given to complete() or fail())."""
        self._record = (record.awaiting, record.ended_after_tools)

    def complete(self, end: RunEnd | Callable[[RecordingSteps], RunEnd] | None = None) -> Future[PublishedEvent | None]:
        """Ends the run with RunCompleted, once: a later complete() or fail() returns this one's future."""

        def publish() -> PublishedEvent:
            chosen = end(self.steps) if callable(end) else (end or RunEnd())
            return self._completion(chosen)

        return self._ending("RunCompleted", publish)

    def fail(self, failure: FailedRunEnd | Callable[[RecordingSteps], FailedRunEnd]) -> Future[PublishedEvent | None]:
        """Ends the run with RunFailed, once: a later complete() or fail() returns this one's future."""

        def publish() -> PublishedEvent:
            chosen = failure(self.steps) if callable(failure) else failure
            return self.run.fail(error=chosen.error, usage=self._usage_of(chosen.usage), **_at(chosen.occurred_at))

        return self._ending("RunFailed", publish)

    def settled(self, timeout: float | None = None) -> list[PublishedEvent]:
        """The events recorded so far, acknowledged, in publication order, once every step has finished; raises
        ToolHistoryPublishError when any could not be published."""
        return self._outbox.settled(timeout)

    def report_failure(self, failure: PublishFailure) -> None:
        """Records a failure that is no publication (the adapter used wrongly): reported, and kept for settled()."""
        self._outbox.record_failure(failure)

    def _step(self, description: str, publish: Callable[[], T]) -> Future[T | None]:
        """A step, in order. Nothing after the run's end; a run that ends as failed also skips it once a step failed,
        or once its end was asked for (a step still waiting then is not the run's any more)."""
        with self._lock:
            if self._end is not None:
                return _done(None)

            def run() -> T | None:
                return None if self._ends_as_failed() and (self._outbox.failed or self.ended) else publish()

            return self._outbox.submit(description, run)

    def _ends_as_failed(self) -> bool:
        return self._after_failed_step == "end-as-failed"

    def _ending(self, description: str, publish: Callable[[], PublishedEvent]) -> Future[PublishedEvent | None]:
        with self._lock:
            if self._end is None:

                def end() -> PublishedEvent | None:
                    return self._recording_failed() if self._ends_as_failed() and self._outbox.failed else publish()

                self._end = self._outbox.submit(description, end)
                self._outbox.close()
            return self._end

    def _recording_failed(self) -> PublishedEvent | None:
        """After a step failed: RunFailed ``recording_failed``, best effort (the broker is likely still away, and the
        first failure says why)."""
        first = self._outbox.first_failure
        cause = (str(first.error) or type(first.error).__name__) if first is not None else "unknown error"
        try:
            return self.run.fail(
                error=RunFailure(_RECORDING_FAILED, f"a step could not be recorded: {cause}"),
                usage=self._usage_of(None),
            )
        except Exception:
            return None

    def _completion(self, end: RunEnd) -> PublishedEvent:
        last = self._responses[-1] if self._responses else None
        awaiting, after_tools = self._record or (False, last is not None and last.asked_for_tools)
        stopped = end.stopped_for_approval if end.stopped_for_approval is not None else awaiting
        ended_after_tools = end.ended_after_tools if end.ended_after_tools is not None else after_tools
        answered = not stopped and not ended_after_tools
        derived = "stop" if answered else self._awaiting_approval if stopped else self._after_tools
        answer = end.answer_text if end.answer_text is not None else (last.text if last is not None else None)
        text = (answer() if callable(answer) else answer) if self._cited_sources_from_answer and answered else None
        return self.run.complete(
            assistant_message_id=end.assistant_message_id or _default_answer_id(last, self.run),
            finish_reason=end.finish_reason or self._finish_reason or derived,
            usage=self._usage_of(end.usage),
            cited_sources=end.cited_sources if end.cited_sources is not None else _cited(text),
            **_at(end.occurred_at),
        )

    def _usage_of(self, given: Sequence[TokenUsage] | None) -> list[TokenUsage] | None:
        usage = list(given) if given is not None else self.usage
        return bounded_usage(usage) or None


def _cited(text: str | None) -> list[int] | None:
    return None if text is None else cited_sources_from(text)


def _default_answer_id(last: _Response | None, run: RunPublisher) -> str:
    if last is not None and (last.message_id or last.response_id):
        return last.message_id or last.response_id or ""
    return run.scope.run_id


def _at(occurred_at: datetime | str | None) -> dict[str, Any]:
    """The event's time when the end says one (else the publisher's now): only then is it passed."""
    return {} if occurred_at is None else {"occurred_at": occurred_at}


def _done(value: T) -> Future[T]:
    future: Future[T] = Future()
    future.set_result(value)
    return future


def _describe(type_: str, calls: Sequence[RecordedCall | RecordedResult | RecordedDecision]) -> str:
    """What a step publishes, for the failure it may be: ``ToolResultReceived round 0 call 1 (get_customer call_b)``."""
    each = [
        f"round {c.round_index} call {c.sequence_index} ({c.tool_name}{f' {c.tool_call_id}' if c.tool_call_id else ''})"
        for c in calls
    ]
    return f"{type_} {', '.join(each)}"
