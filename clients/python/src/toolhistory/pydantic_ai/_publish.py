"""Publishing what a PydanticAI run records, through the recording core (blocking: from async code, call through
``asyncio.to_thread``), and ``recorded_run``, which runs the agent and records it."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage

from toolhistory._recording import FailedRunEnd, RecordedCall, RecordingSteps, RunEnd, RunRecord, RunRecording
from toolhistory.events import RunFailure
from toolhistory.pydantic_ai._record import answer_text_of, is_default_output_tool, run_failure_of, run_record

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from pydantic_ai.agent import AbstractAgent
    from pydantic_ai.run import AgentRunResult

    from toolhistory.publisher import RunPublisher

_log = logging.getLogger("toolhistory.pydantic_ai")


def publish_run_steps(
    run: RunPublisher,
    record: RunRecord,
    *,
    decided_by: str | None = None,
    approval_reason: Callable[[RecordedCall], str | None] | None = None,
) -> None:
    """Publishes the decisions and resumed results, then each round: its calls, results and approval requests."""
    RecordingSteps(run, decided_by=decided_by, approval_reason=approval_reason).record(record)


def publish_run_record(
    run: RunPublisher,
    record: RunRecord,
    *,
    assistant_message_id: str | None,
    finish_reason: str | None = None,
    decided_by: str | None = None,
    approval_reason: Callable[[RecordedCall], str | None] | None = None,
    cited_sources: Sequence[int] | None = None,
) -> None:
    """Publishes a completed run's steps, then ``RunCompleted`` with its usage.

    ``assistant_message_id`` is the host's id of the run's answer (replay puts the tool segment right
    before that message); ``None`` falls back to the provider's id of the last model response, else the run id.
    ``cited_sources``: the source numbers the answer cites (``RunPublisher.complete``'s).
    """
    _complete(
        run,
        record,
        RunEnd(cited_sources=cited_sources),
        assistant_message_id,
        finish_reason,
        decided_by,
        approval_reason,
    )


def publish_run_failure(
    run: RunPublisher,
    record: RunRecord | None,
    error: BaseException,
    *,
    decided_by: str | None = None,
) -> None:
    """Publishes what a failed run finished (its rounds), then ``RunFailed`` with the usage of its model calls."""
    code, message = run_failure_of(error)
    end = FailedRunEnd(RunFailure(code=code, message=message), usage=record.usage if record is not None else None)

    def failed(steps: RecordingSteps) -> FailedRunEnd:
        if record is not None:
            steps.record(record)
        return end

    RunRecording(run, decided_by=decided_by).fail(failed).result()


def record_messages(
    run: RunPublisher,
    messages: Sequence[ModelMessage],
    *,
    assistant_message_id: str | None,
    history: Sequence[ModelMessage] = (),
    output: object = None,
    deferred_tool_results: DeferredToolResults | None = None,
    finish_reason: str | None = None,
    decided_by: str | None = None,
    approval_reason: Callable[[RecordedCall], str | None] | None = None,
    is_output_tool: Callable[[str], bool] = is_default_output_tool,
    cited_sources_from_answer: bool = False,
) -> RunRecord:
    """Records a finished run from ``result.new_messages()`` and ends it with ``RunCompleted``. Blocking.

    ``output`` is ``result.output``: a ``DeferredToolRequests`` makes its approval calls
    ``ToolApprovalRequested`` (the run ends ``tool_limit``). For a run that resumed with
    ``deferred_tool_results``, pass them and the ``message_history`` it was given as ``history``.
    ``cited_sources_from_answer``: see ``recorded_run``. Returns what was recorded.
    """
    record = run_record(
        messages,
        history=history,
        deferred_requests=output if isinstance(output, DeferredToolRequests) else None,
        deferred_results=deferred_tool_results,
        is_output_tool=is_output_tool,
    )
    # Only an answer says what it cites: the core asks for its text only when the run answered.
    end = RunEnd(answer_text=lambda: answer_text_of(output))
    _complete(
        run, record, end, assistant_message_id, finish_reason, decided_by, approval_reason, cited_sources_from_answer
    )
    return record


def record_failure(
    run: RunPublisher,
    messages: Sequence[ModelMessage],
    error: BaseException,
    *,
    history: Sequence[ModelMessage] = (),
    deferred_tool_results: DeferredToolResults | None = None,
    decided_by: str | None = None,
    is_output_tool: Callable[[str], bool] = is_default_output_tool,
) -> RunRecord:
    """Records a run that raised ``error``: the rounds in ``messages`` (done so far), then ``RunFailed``. Blocking."""
    record = run_record(
        messages, history=history, deferred_results=deferred_tool_results, is_output_tool=is_output_tool
    )
    publish_run_failure(run, record, error, decided_by=decided_by)
    return record


def _complete(
    run: RunPublisher,
    record: RunRecord,
    end: RunEnd,
    assistant_message_id: str | None,
    finish_reason: str | None,
    decided_by: str | None,
    approval_reason: Callable[[RecordedCall], str | None] | None,
    cited_sources_from_answer: bool = False,
) -> None:
    """The record's steps, then ``RunCompleted``: the host's answer id, else the provider's id of the last response,
    else the run id; the record's finish reason unless one is given."""
    recording = RunRecording(
        run,
        decided_by=decided_by,
        approval_reason=approval_reason,
        cited_sources_from_answer=cited_sources_from_answer,
        finish_reason=finish_reason,
    )
    recording.note_record(record)
    answer_id = assistant_message_id or record.last_response_id

    def completed(steps: RecordingSteps) -> RunEnd:
        steps.record(record)
        return RunEnd(
            assistant_message_id=answer_id,
            usage=record.usage,
            answer_text=end.answer_text,
            cited_sources=end.cited_sources,
        )

    recording.complete(completed).result()


async def recorded_run(
    run_publisher: RunPublisher,
    agent: AbstractAgent[Any, Any],
    user_prompt: Any = None,
    *,
    assistant_message_id: str | None,
    message_history: Sequence[ModelMessage] | None = None,
    deferred_tool_results: DeferredToolResults | None = None,
    finish_reason: str | None = None,
    decided_by: str | None = None,
    approval_reason: Callable[[RecordedCall], str | None] | None = None,
    is_output_tool: Callable[[str], bool] = is_default_output_tool,
    cited_sources_from_answer: bool = False,
    **kwargs: Any,
) -> AgentRunResult[Any]:
    """Runs ``agent`` (as ``agent.run``, through ``agent.iter``) and records the run; returns its result.

    ``kwargs`` go to ``agent.iter`` (``deps``, ``model``, ``output_type``, ...). When the run raises, what it
    finished so far and ``RunFailed`` are recorded and the error is raised again (a failure to record it is
    not: the run's own error is what the caller needs). Publishing runs in a worker thread.

    ``cited_sources_from_answer=True``: ``RunCompleted.citedSources`` are the ``[sourceN]`` the answer cites
    (``cited_sources_from`` of ``result.output``; a structured output, of its JSON text), and ``[]`` when it
    cites none, which drops every item of the results a policy ``citations`` rule names from this run's
    replay. A run that ends without an answer (stopped for approvals, or right after tools) leaves them out:
    a later run's answer may cite those results. Default ``False``: left out, so the results replay whole.
    """
    runs: list[Any] = []
    try:
        result = await _run(agent, user_prompt, message_history, deferred_tool_results, runs, kwargs)
    except (Exception, asyncio.CancelledError) as error:
        await _record_failure_quietly(run_publisher, runs, error, deferred_tool_results, decided_by, is_output_tool)
        raise
    new_messages = result.new_messages()
    await asyncio.to_thread(
        record_messages,
        run_publisher,
        new_messages,
        assistant_message_id=assistant_message_id,
        history=_history_before(result.all_messages(), new_messages),
        output=result.output,
        deferred_tool_results=deferred_tool_results,
        finish_reason=finish_reason,
        decided_by=decided_by,
        approval_reason=approval_reason,
        is_output_tool=is_output_tool,
        cited_sources_from_answer=cited_sources_from_answer,
    )
    return cast("AgentRunResult[Any]", result)


async def _run(
    agent: AbstractAgent[Any, Any],
    user_prompt: Any,
    message_history: Sequence[ModelMessage] | None,
    deferred_tool_results: DeferredToolResults | None,
    runs: list[Any],
    kwargs: dict[str, Any],
) -> Any:
    """The agent's run to its end (``runs`` gets the run as it starts, for a failure's record)."""
    async with agent.iter(
        user_prompt, message_history=message_history, deferred_tool_results=deferred_tool_results, **kwargs
    ) as agent_run:
        runs.append(agent_run)
        async for _node in agent_run:
            pass
    result = agent_run.result
    if result is None:
        raise RuntimeError("the agent run ended without a result")
    return result


async def _record_failure_quietly(
    run_publisher: RunPublisher,
    runs: list[Any],
    error: BaseException,
    deferred_tool_results: DeferredToolResults | None,
    decided_by: str | None,
    is_output_tool: Callable[[str], bool],
) -> None:
    """What the failed run finished, and ``RunFailed``; an error while publishing it is logged, not raised over the
    run's own."""
    agent_run = runs[0] if runs else None
    messages: list[ModelMessage] = agent_run.new_messages() if agent_run is not None else []
    history = _history_before(agent_run.all_messages(), messages) if agent_run is not None else []
    record = run_record(
        messages, history=history, deferred_results=deferred_tool_results, is_output_tool=is_output_tool
    )
    try:
        await asyncio.to_thread(publish_run_failure, run_publisher, record, error, decided_by=decided_by)
    except Exception:
        # The run's own error is what the caller needs; the publisher's is logged.
        _log.warning("recording the failure of run %s failed", run_publisher.scope.run_id, exc_info=True)


def _history_before(all_messages: Sequence[ModelMessage], new_messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    return list(all_messages[: len(all_messages) - len(new_messages)])
