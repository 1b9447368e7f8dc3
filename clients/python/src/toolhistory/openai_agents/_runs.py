"""Running an agent and recording the run: ``recorded_run`` and ``recorded_run_streamed``."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

from agents import Agent, Runner, RunResult, RunResultStreaming, RunState, StreamEvent, TResponseInputItem

from toolhistory._recording import ABORTED
from toolhistory.events import RunFailure
from toolhistory.openai_agents._record import ApprovalRequest
from toolhistory.openai_agents._recorder import AgentsRunRecorder, publish_quietly
from toolhistory.openai_agents._tool_errors import ToolErrorTest, error_marks

if TYPE_CHECKING:
    from toolhistory.publisher import RunPublisher

STREAM_CANCELLED = RunFailure(code=ABORTED, message="the streamed run was cancelled before its events were exhausted")
"""The failure of a streamed run whose consumer stopped before its events ended."""


async def recorded_run(
    run_publisher: RunPublisher,
    agent: Agent[Any],
    input: str | list[TResponseInputItem] | RunState[Any, Any],
    *,
    assistant_message_id: str,
    finish_reason: str | None = None,
    decided_by: str | None = None,
    approval_reason: Callable[[ApprovalRequest], str | None] | None = None,
    is_tool_error: ToolErrorTest | None = None,
    model: str | None = None,
    provider: str | None = None,
    cited_sources_from_answer: bool = False,
    **runner_kwargs: Any,
) -> RunResult:
    """Runs ``Runner.run(agent, input, **runner_kwargs)`` and records it as one run of ``run_publisher``.

    A ``RunState`` input resumes a run that stopped for approvals: the answers given with
    ``state.approve``/``state.reject`` are recorded (``ToolApprovalDecided``), then the run goes on.
    When the run raises, ``RunFailed`` is recorded with the rounds it got through and the error
    re-raised (a publishing error then is not raised over it). Your own ``hooks`` and ``run_config``
    still apply. ``provider`` (the provider a round's reasoning is recorded through; default ``openai`` for the SDK's
    OpenAI models, none for others) and ``cited_sources_from_answer``: see ``AgentsRunRecorder``.
    """
    recorder = AgentsRunRecorder(
        run_publisher,
        assistant_message_id=assistant_message_id,
        finish_reason=finish_reason,
        decided_by=decided_by,
        approval_reason=approval_reason,
        is_tool_error=is_tool_error,
        model=model,
        provider=provider,
        cited_sources_from_answer=cited_sources_from_answer,
    )
    return await recorder.run_agent(agent, input, **runner_kwargs)


class RecordedStreamedRun:
    """A streamed run being recorded: iterate ``stream_events()``; the run is recorded when they end.

    ``result`` is the SDK's ``RunResultStreaming``. When the events raise, ``RunFailed`` is recorded
    and the error re-raised; when you stop iterating early, the run is cancelled and recorded as
    ``RunFailed`` (``STREAM_CANCELLED``).
    """

    def __init__(self, recorder: AgentsRunRecorder, result: RunResultStreaming) -> None:
        self.recorder = recorder
        self.result = result

    async def stream_events(self) -> AsyncGenerator[StreamEvent, None]:
        """The run's events, as ``result.stream_events()`` gives them."""
        token = error_marks.set(self.recorder.error_marks)
        try:
            async for event in self.result.stream_events():
                yield event
        except Exception as error:
            await publish_quietly(self.recorder.fail(error, self.result))
            raise
        except BaseException:
            # GeneratorExit (the consumer stopped) or cancellation: the run does not go on.
            self.result.cancel()
            await publish_quietly(self.recorder.fail(STREAM_CANCELLED, self.result))
            raise
        finally:
            error_marks.reset(token)
        await self.recorder.complete(self.result)


def recorded_run_streamed(
    run_publisher: RunPublisher,
    agent: Agent[Any],
    input: str | list[TResponseInputItem] | RunState[Any, Any],
    *,
    assistant_message_id: str,
    finish_reason: str | None = None,
    decided_by: str | None = None,
    approval_reason: Callable[[ApprovalRequest], str | None] | None = None,
    is_tool_error: ToolErrorTest | None = None,
    model: str | None = None,
    provider: str | None = None,
    cited_sources_from_answer: bool = False,
    **runner_kwargs: Any,
) -> RecordedStreamedRun:
    """``Runner.run_streamed(agent, input, **runner_kwargs)``, recorded once its events are exhausted.

    ``async for event in recorded_run_streamed(...).stream_events(): ...``; see ``recorded_run``.
    """
    recorder = AgentsRunRecorder(
        run_publisher,
        assistant_message_id=assistant_message_id,
        finish_reason=finish_reason,
        decided_by=decided_by,
        approval_reason=approval_reason,
        is_tool_error=is_tool_error,
        model=model,
        provider=provider,
        cited_sources_from_answer=cited_sources_from_answer,
    )
    if isinstance(input, RunState):
        recorder.resuming(input)
    runner_kwargs["hooks"] = recorder.hooks(runner_kwargs.get("hooks"))
    runner_kwargs["run_config"] = recorder.run_config(runner_kwargs.get("run_config"))
    # The run's task copies the context now: its tools mark errors in this recorder's set.
    token = error_marks.set(recorder.error_marks)
    try:
        result = Runner.run_streamed(agent, input, **runner_kwargs)
    finally:
        error_marks.reset(token)
    return RecordedStreamedRun(recorder, result)
