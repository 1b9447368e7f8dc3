"""The callback handler: LangChain's callbacks mapped onto the recording core."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration
from langgraph.callbacks import GraphCallbackHandler
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from toolhistory._recording import AskedCall, FailedRunEnd, PendingApproval, PublishFailure, ToolOutcome
from toolhistory.langchain._agent_run import AgentRun, RunInfo, now, state_messages_of
from toolhistory.langchain._payloads import (
    canonical_json,
    error_result_of,
    failure_of,
    to_json_object,
    token_usage_of,
    tool_calls_of,
    tool_messages_in,
    tool_outcome_of,
)
from toolhistory.langchain._reasoning import reasoning_of

if TYPE_CHECKING:
    from uuid import UUID

    from langchain_core.outputs import LLMResult
    from langgraph.callbacks import GraphInterruptEvent

    from toolhistory.events import PublishedEvent, RunScope
    from toolhistory.publisher import RunPublisher, ToolEventPublisher


class ToolHistoryCallbackHandler(GraphCallbackHandler):
    """Records one agent run to toolhistory from LangChain's callbacks.

    Pass it in ``config={"callbacks": [handler]}`` when invoking the agent.

    - Each model output with tool calls opens a round (``round_index`` counts them from 0); each call is a
      ToolCallRequested, ``sequence_index`` its position in the output. Token usage is kept per model call.
    - A tool run's end is the call's ToolResultReceived (an error ToolMessage or a raised error is an error
      result); a call no tool ran (an unknown tool, arguments the tool refused) is answered by the ToolMessage
      the tool node gave the model. A call the model gave no id is matched by tool name and arguments.
    - LangGraph's ``interrupt()`` inside a tool is ToolApprovalRequested for its call: no result, no failure.
      The run stays open, and resuming the graph (``Command(resume=...)``) with this handler goes on with it
      (or, with ``interrupt_ends_run``, it completes and a later run's handler resumes it). A resume value that
      says approved or denied (see :func:`approval_decision_of`) is ToolApprovalDecided, and the tool's end the
      call's result, both with the call's id, round and sequence.
    - The agent run (the outermost chain run) ending is RunCompleted (``finish_reason`` ``stop`` when the model's
      last output asked for no tools, usage per model call); its error is RunFailed.

    Events are published in that order, each callback returning once the broker acknowledged its events. The
    handler is a synchronous one on purpose: publishing blocks, and LangChain runs a sync handler's callbacks
    of an async graph on its executor threads (awaited, so the order holds), never on the event loop; an async
    handler would be run on a throwaway event loop for a sync graph, with its errors swallowed.

    One handler per agent run: record to ``run`` (a RunPublisher, its scope fixed), or to ``publisher.run(...)`` of
    ``scope``.

    Args:
        run: The run's publisher. Give either it, or ``publisher`` and ``scope``.
        publisher: Opens the run when the agent run starts, so it can carry the user's message id.
        scope: The run's tenant, conversation, channel and run id (with ``publisher``).
        assistant_message_id: The host's final assistant message of the run; default: the id of the model's
            last output.
        finish_reason_after_tools: RunCompleted's finish reason when the agent ended right after executing
            tools (its last model output asked for tools).
        user_message_id: The host's id of the message that started the run. Default (with ``publisher``):
            the id of the last HumanMessage of the agent's input. A RunPublisher's scope is fixed: give it there.
        interrupt_ends_run: An interrupt ends the run (RunCompleted, finish reason as after tools), for a host
            that resumes the graph in a later run with another handler. Default: the run stays open.
        pending_approvals: The calls awaiting approval that this run may resume, as the replay lists them: a
            resumed call of an earlier run is recorded with its round and sequence from here. Without them,
            the handler places it by the agent's messages, which is right for a call of a run that began at
            the user's message and was the one call of its round.
        decided_by: Who decided, when the resume value says approved or denied but not by whom.
        raise_error: A failed publication fails the agent run (LangChain re-raises it). Default: LangChain
            logs it, :meth:`settled` raises it and ``on_publish_error`` hears of it.
        on_publish_error: Called for every event that could not be published.
        cited_sources_from_answer: RunCompleted's ``citedSources`` are the ``[sourceN]`` the answer cites
            (``cited_sources_from`` of the text of the model's last output), and ``[]`` when it cites none,
            which drops every item of the results a policy ``citations`` rule names from this run's replay.
            A run that ends without an answer (its last output asked for tools, an interrupt ended it, or no
            model output was seen) leaves them out: a later run's answer may cite those results. Default:
            left out, so the results replay whole.
    """

    def __init__(
        self,
        run: RunPublisher | None = None,
        *,
        publisher: ToolEventPublisher | None = None,
        scope: RunScope | None = None,
        assistant_message_id: str | None = None,
        finish_reason_after_tools: str = "tool_limit",
        user_message_id: str | None = None,
        interrupt_ends_run: bool = False,
        pending_approvals: Sequence[PendingApproval] | None = None,
        decided_by: str | None = None,
        raise_error: bool = False,
        on_publish_error: Callable[[PublishFailure], None] | None = None,
        cited_sources_from_answer: bool = False,
    ) -> None:
        """Record to ``run`` (a RunPublisher, its scope fixed), or to ``publisher.run(...)`` of ``scope``: see the
        class for the arguments."""
        super().__init__()
        opener = (publisher, scope) if publisher is not None and scope is not None else None
        if (run is None) == (opener is None) or (run is not None and (publisher, scope) != (None, None)):
            raise TypeError("ToolHistoryCallbackHandler: give either run, or publisher and scope")
        if run is not None and user_message_id is not None and run.scope.user_message_id != user_message_id:
            raise TypeError(
                f"user_message_id: a RunPublisher's scope is fixed (it has {run.scope.user_message_id!r}, "
                f"not {user_message_id!r}): pass publisher and scope, or give publisher.run() the user_message_id"
            )
        self.raise_error = raise_error
        recording_options: dict[str, Any] = {
            "decided_by": decided_by,
            "cited_sources_from_answer": cited_sources_from_answer,
            "finish_reason_after_tools": finish_reason_after_tools,
            "on_publish_error": on_publish_error,
        }
        self._agent = AgentRun(
            run, opener, user_message_id, assistant_message_id, interrupt_ends_run, pending_approvals, recording_options
        )
        self._lock = threading.RLock()

    @property
    def run(self) -> RunPublisher:
        """The run being recorded (with ``publisher`` and ``scope``: opened when the agent run starts, or here)."""
        with self._lock:
            return self._agent.recording.run

    def settled(self, timeout: float | None = None) -> list[PublishedEvent]:
        """The events recorded so far, acknowledged, in publication order, once every one has been published.

        Raises:
            ToolHistoryPublishError: when any event could not be published (or the handler was used for a
                second agent run).
        """
        opened = self._agent.opened
        return opened.settled(timeout) if opened is not None else []

    # ---- LangChain's callbacks -----------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: dict[str, Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            state = self._agent.state
            state.runs[run_id] = RunInfo("chain", parent_run_id)
            if parent_run_id is not None:
                messages = state_messages_of(inputs)
                if messages is not None and self._agent.in_loop(parent_run_id):
                    state.state_messages = messages
                return
            if state.ended or state.agent_run_id is not None:
                self._agent.second_run(run_id)
                return
            self._agent.start(run_id, inputs)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_started(run_id, parent_run_id, metadata, kwargs.get("invocation_params"))

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_started(run_id, parent_run_id, metadata, kwargs.get("invocation_params"))

    def on_llm_end(
        self, response: LLMResult, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            state = self._agent.state
            called_model = state.called_models.pop(run_id, None)
            if not self._agent.in_loop(parent_run_id):
                return
            generation = response.generations[0][0] if response.generations and response.generations[0] else None
            message = generation.message if isinstance(generation, ChatGeneration) else None
            if message is not None and isinstance(message.id, str) and message.id:
                state.last_assistant_message_id = message.id
            if generation is not None:
                state.last_output_text = str(message.text) if message is not None else generation.text
            round_ = self._agent.recording.response(
                calls=[AskedCall(c.tool_call_id, c.tool_name, c.arguments) for c in tool_calls_of(message)],
                usage=token_usage_of(message, response.llm_output, called_model),
                text=state.last_output_text,
                reasoning=reasoning_of(message, called_model),
            )
            if round_ is None:
                return
            self._agent.calls.track(round_.calls)
            pending = self._agent.recording.publish_calls(round_.calls, now())
        pending.result()

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            self._agent.state.runs[run_id] = RunInfo("tool", parent_run_id)
            if not self._agent.in_loop(parent_run_id):
                return
            tool_call_id = kwargs.get("tool_call_id")
            tool_call_id = tool_call_id if isinstance(tool_call_id, str) else None
            tool_name = kwargs.get("name") or (serialized or {}).get("name")
            arguments_json = canonical_json(to_json_object(inputs)) if inputs is not None else None
            call = self._agent.calls.pending(
                tool_call_id, tool_name if isinstance(tool_name, str) else None, False, arguments_json
            )
            if call is None and self._agent.state.resume is not None:
                call = self._agent.calls.resumed(tool_call_id, self._agent.state.state_messages)
            if call is None:
                return
            call.claimed = True
            self._agent.state.tool_runs[run_id] = call
            pending = self._agent.decide(call)
        if pending is not None:
            pending.result()

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            call = self._agent.state.tool_runs.pop(run_id, None)
            if call is None and self._agent.in_loop(parent_run_id):
                call = self._agent.call_answered_by(output)
            if call is None or call.answered:
                return
            pending = self._agent.publish_result(call, tool_outcome_of(output, call.call.tool_call_id))
        pending.result()

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            call = self._agent.state.tool_runs.pop(run_id, None)
            if call is None or call.answered:
                return
            pending: Future[Any] | None
            if isinstance(error, GraphInterrupt):
                pending = self._agent.request_approval(call, error)
            elif isinstance(error, GraphBubbleUp):
                # A command for the parent graph: the call is still to be answered when the run goes on.
                call.claimed = False
                pending = None
            elif isinstance(error, asyncio.CancelledError):
                # The host cancelled the run mid-call: whether the call took effect is unknown, so no result is
                # made up for it (replay shows a side-effect call as interrupted; the run fails aborted).
                pending = None
            else:
                pending = self._agent.publish_result(call, ToolOutcome(result=error_result_of(error), is_error=True))
        if pending is not None:
            pending.result()

    def on_chain_end(
        self, outputs: dict[str, Any], *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            if run_id == self._agent.state.agent_run_id:
                pending: list[Future[Any]] = [p for p in [self._agent.agent_run_ended()] if p is not None]
            elif not self._agent.in_loop(parent_run_id):
                return
            else:
                # Calls no tool run answered (an unknown tool, arguments its schema refused): the tool node answered.
                pending = []
                for message in tool_messages_in(outputs):
                    call = (
                        self._agent.calls.pending(message.tool_call_id, None, False) if message.tool_call_id else None
                    )
                    if call is not None:
                        pending.append(self._agent.publish_result(call, tool_outcome_of(message)))
        for publication in pending:
            publication.result()

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            state = self._agent.state
            if run_id != state.agent_run_id or state.ended:
                return
            if isinstance(error, GraphBubbleUp) or state.interrupted:
                pending = self._agent.interrupted_run_ended()
            else:
                self._agent.end()
                pending = self._agent.recording.fail(FailedRunEnd(failure_of(error), occurred_at=now()))
        if pending is not None:
            pending.result()

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        """LangGraph: the root graph paused at an interrupt; its ``on_chain_end`` follows."""
        with self._lock:
            if event.run_id is None or event.run_id == self._agent.state.agent_run_id:
                self._agent.state.interrupted = True

    def _model_started(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, invocation: object
    ) -> None:
        with self._lock:
            self._agent.model_started(run_id, parent_run_id, metadata, invocation)
