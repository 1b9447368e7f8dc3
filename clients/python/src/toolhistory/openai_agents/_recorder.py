"""Recording a run of the OpenAI Agents SDK: its result (or the state an error carries) mapped onto the recording
core, which publishes it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from agents import (
    Agent,
    ModelResponse,
    RunConfig,
    RunContextWrapper,
    RunErrorDetails,
    RunHooks,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    ToolApprovalItem,
)
from agents.items import RunItem

from toolhistory._recording import FailedRunEnd, RecordingSteps, RunEnd, RunRecord, RunRecording
from toolhistory.events import RunFailure
from toolhistory.openai_agents._hooks import RecordingHooks
from toolhistory.openai_agents._items import describe_run_failure, final_output_text, provider_of_model
from toolhistory.openai_agents._record import (
    AgentsRunRecord,
    ApprovalRequest,
    ResumePoint,
    agents_run_record,
    resume_point_of,
)
from toolhistory.openai_agents._tool_errors import ToolErrorTest, error_marks

if TYPE_CHECKING:
    from agents.run_config import ToolErrorFormatterArgs

    from toolhistory.publisher import RunPublisher

End = TypeVar("End", RunEnd, FailedRunEnd)


def _after_steps(record: RunRecord | None, end: End) -> Callable[[RecordingSteps], End]:
    """The end, once the record's steps are published (in the end's turn: a run ends once)."""

    def publish(steps: RecordingSteps) -> End:
        if record is not None:
            steps.record(record)
        return end

    return publish


async def publish_quietly(publishing: Awaitable[None]) -> None:
    """Publishes a failure without hiding the run's own error behind a publishing one."""
    with contextlib.suppress(Exception):
        await publishing


class AgentsRunRecorder:
    """Records one run of the OpenAI Agents SDK through ``run`` (a ``RunPublisher``).

    Use ``recorded_run`` / ``recorded_run_streamed``, or drive it yourself: pass ``hooks()`` and
    ``run_config()`` to ``Runner.run``, call ``resuming(state)`` before resuming a ``RunState``, then
    ``complete(result)`` or ``fail(error)``. One recorder per run; a run that resumes a state is a new
    run (its own run id). Publishing blocks, so it runs on the recording's worker thread.
    """

    def __init__(
        self,
        run: RunPublisher,
        *,
        assistant_message_id: str,
        finish_reason: str | None = None,
        decided_by: str | None = None,
        approval_reason: Callable[[ApprovalRequest], str | None] | None = None,
        is_tool_error: ToolErrorTest | None = None,
        model: str | None = None,
        provider: str | None = None,
        cited_sources_from_answer: bool = False,
    ) -> None:
        """``assistant_message_id``: the host's id of the run's final answer (the replayed tool segment
        goes right before it). ``finish_reason``: default ``stop``, or ``awaiting_approval`` when the run
        stopped for approvals, ``tool_limit`` when it ended right after executing tools. ``model``: the
        model name recorded with each call's tokens (default: the agent's model, when it names one).
        ``provider``: the provider a round's reasoning items and text are recorded through (``openai``,
        ``anthropic``, ``google``, ...; default: ``openai`` for the SDK's OpenAI models, ``provider_of_model``).
        A run on another model (LiteLLM, a custom ``Model``) records none of it unless you name its provider, and
        then only when its reasoning items are that provider's own.
        ``is_tool_error``: replaces ``is_sdk_tool_error`` (call it from yours to keep the marks of
        ``tool_error_function``). ``cited_sources_from_answer=True``: ``RunCompleted.citedSources`` are the
        ``[sourceN]`` the final output cites (``cited_sources_from`` of its text; a structured output, of its
        JSON text), and ``[]`` when it cites none, which drops every item of the results a policy ``citations``
        rule names from this run's replay. A run that ends without the model's answer (stopped for approvals,
        or right after tools) leaves them out: a later run's answer may cite those results. Default ``False``:
        left out, so the results replay whole."""
        self.run = run
        self.assistant_message_id = assistant_message_id
        self.finish_reason = finish_reason
        self.decided_by = decided_by
        self.approval_reason = approval_reason
        self.is_tool_error = is_tool_error
        self.model = model
        self.provider = provider
        self.cited_sources_from_answer = cited_sources_from_answer
        self.error_marks: set[str] = set()
        self._resume_point: ResumePoint | None = None
        self._hooks: RecordingHooks | None = None
        self._last_provider: str | None = None
        self._run_config: RunConfig | None = None
        self._recording = RunRecording(
            run,
            decided_by=decided_by,
            approval_reason=approval_reason,
            cited_sources_from_answer=cited_sources_from_answer,
            finish_reason=finish_reason,
            finish_reason_awaiting_approval="awaiting_approval",
        )

    def hooks(self, host_hooks: RunHooks[Any] | None = None) -> RunHooks[Any]:
        """The hooks to give ``Runner.run``: they see the run's steps, and call ``host_hooks`` too."""
        self._hooks = RecordingHooks(host_hooks, self._model_name, self._provider_name)
        return self._hooks

    def run_config(self, run_config: RunConfig | None = None) -> RunConfig | None:
        """``run_config`` with its ``tool_error_formatter`` (if any) made to mark the outputs it formats
        as errors; give the result to ``Runner.run``."""
        self._run_config = run_config
        if run_config is None or run_config.tool_error_formatter is None:
            return run_config
        host_formatter = run_config.tool_error_formatter

        def formatter(args: ToolErrorFormatterArgs[Any]) -> Any:
            if args.kind in ("tool_exception", "tool_not_found"):
                marks = error_marks.get()
                if marks is not None:
                    marks.add(args.call_id)
            return host_formatter(args)

        return dataclasses.replace(run_config, tool_error_formatter=formatter)

    def resuming(self, state: RunState[Any, Any]) -> AgentsRunRecorder:
        """Call before ``Runner.run(agent, state)`` resumes ``state`` (``recorded_run`` does it for you)."""
        self._resume_point = resume_point_of(state)
        return self

    def record_of(
        self,
        new_items: Sequence[RunItem],
        raw_responses: Sequence[ModelResponse],
        *,
        interruptions: Sequence[ToolApprovalItem] = (),
        context_wrapper: RunContextWrapper[Any] | None = None,
    ) -> AgentsRunRecord:
        """What this run records from the given view of it."""
        hooks = self._hooks
        token = error_marks.set(self.error_marks)
        try:
            return agents_run_record(
                new_items,
                raw_responses,
                interruptions=interruptions,
                context_wrapper=context_wrapper,
                resume_point=self._resume_point,
                is_tool_error=self.is_tool_error,
                model_of=self._model_of_response,
                provider_of=self._provider_of_response,
                observed_outputs=hooks.outputs if hooks is not None else (),
            )
        finally:
            error_marks.reset(token)

    async def complete(self, result: RunResult | RunResultStreaming) -> None:
        """Records the run's rounds and ``RunCompleted`` from its result (a streamed result once its
        events are exhausted). Once the run has ended, does nothing."""
        if self._recording.ended:
            return
        record = self.record_of(
            result.new_items,
            result.raw_responses,
            interruptions=result.interruptions,
            context_wrapper=result.context_wrapper,
        )
        self._recording.note_record(record)
        end = RunEnd(
            assistant_message_id=self.assistant_message_id,
            usage=record.usage,
            answer_text=lambda: final_output_text(result.final_output),
        )
        await asyncio.wrap_future(self._recording.complete(_after_steps(record, end)))

    async def fail(
        self, error: BaseException | RunFailure, run: RunErrorDetails | RunResultStreaming | None = None
    ) -> None:
        """Records ``RunFailed`` for what the run raised (or the given ``RunFailure``), with the rounds
        it got through and the tokens spent: from ``run`` (default: the ``run_data`` an SDK error
        carries), else from what the recorder's hooks saw. Once the run has ended, does nothing."""
        if self._recording.ended:
            return
        record = self._record_of_failed(run if run is not None else getattr(error, "run_data", None))
        failure = error if isinstance(error, RunFailure) else describe_run_failure(error)
        end = FailedRunEnd(failure, usage=record.usage if record is not None else None)
        await asyncio.wrap_future(self._recording.fail(_after_steps(record, end)))

    async def run_agent(self, agent: Agent[Any], input: Any, **runner_kwargs: Any) -> RunResult:
        """``Runner.run(agent, input, **runner_kwargs)``, recorded; see ``recorded_run``."""
        if isinstance(input, RunState):
            self.resuming(input)
        runner_kwargs["hooks"] = self.hooks(runner_kwargs.get("hooks"))
        runner_kwargs["run_config"] = self.run_config(runner_kwargs.get("run_config"))
        token = error_marks.set(self.error_marks)
        try:
            result = await Runner.run(agent, input, **runner_kwargs)
        except (Exception, asyncio.CancelledError) as error:
            await publish_quietly(self.fail(error))
            raise
        finally:
            error_marks.reset(token)
        await self.complete(result)
        return result

    def _record_of_failed(self, view: object) -> AgentsRunRecord | None:
        """What a failed run got through: its state's view, else what the recorder's hooks saw."""
        if isinstance(view, (RunErrorDetails, RunResultStreaming)):
            return self.record_of(view.new_items, view.raw_responses, context_wrapper=view.context_wrapper)
        if self._hooks is None:
            return None
        earlier = self._resume_point
        return self.record_of(
            list(earlier.items) if earlier is not None else [],
            [*(earlier.responses if earlier is not None else ()), *self._hooks.responses],
        )

    def _model_of_response(self, response: ModelResponse) -> str | None:
        if self.model is not None:
            return self.model
        return self._hooks.models.get(id(response)) if self._hooks is not None else None

    def _provider_of_response(self, response: ModelResponse) -> str | None:
        if self.provider is not None:
            return self.provider
        # A response the hooks did not see (one of a resumed state's): the provider of the run's own models.
        if self._hooks is not None and id(response) in self._hooks.providers:
            return self._hooks.providers[id(response)]
        return self._last_provider

    def _provider_name(self, agent: Agent[Any]) -> str | None:
        configured = self._run_config.model if self._run_config is not None else None
        model_provider = self._run_config.model_provider if self._run_config is not None else None
        self._last_provider = provider_of_model(configured if configured is not None else agent.model, model_provider)
        return self._last_provider

    def _model_name(self, agent: Agent[Any]) -> str | None:
        configured = self._run_config.model if self._run_config is not None else None
        for model in (configured, agent.model):
            if isinstance(model, str) and model:
                return model
            name = getattr(model, "model", None)
            if isinstance(name, str) and name:
                return name
        return None
