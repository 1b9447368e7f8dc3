"""Record a LangGraph / LangChain agent's tool calls to toolhistory, and replay them as LangChain messages.

Recording: pass a :class:`ToolHistoryCallbackHandler` in the ``callbacks`` of
the agent's invocation (a LangGraph graph such as one with a ``ToolNode``, or
any runnable whose tool loop runs inside it). Replay: turn a
:class:`toolhistory.replay.ReplayHistory` into LangChain messages with
:func:`to_langchain_messages`, or splice them into the host's conversation with
:func:`splice_tool_history`. Search: :func:`search_history_tool` gives the agent
a ``search_history`` tool over the tool calls of its own conversation.

Needs the ``langchain`` extra: ``pip install 'toolhistory-client[langchain]'``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeGuard, TypeVar, cast

try:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration
    from langchain_core.tools import StructuredTool, ToolException
    from langgraph.callbacks import GraphCallbackHandler
    from langgraph.errors import GraphBubbleUp, GraphInterrupt
    from langgraph.types import Command
    from pydantic import BaseModel, ConfigDict, Field
except ImportError as missing:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "toolhistory.langchain needs langchain-core and langgraph: pip install 'toolhistory-client[langchain]'"
    ) from missing

import grpc

# SearchMatch at run time: LangGraph's ToolNode reads the search tool's functions' annotations.
from toolhistory._grpc import SearchMatch
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.errors import ToolHistoryError
from toolhistory.events import RunFailure, TokenUsage
from toolhistory.events import ToolCall as RecordedToolCall
from toolhistory.limits import MAX_ID_LENGTH, MAX_INDEX, bounded_usage
from toolhistory.publisher import cited_sources_from
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from uuid import UUID

    from langchain_core.outputs import LLMResult
    from langgraph.callbacks import GraphInterruptEvent

    from toolhistory.client import ToolHistoryClient
    from toolhistory.events import JsonObject, JsonValue, PublishedEvent, RunScope
    from toolhistory.publisher import RunPublisher, ToolEventPublisher
    from toolhistory.replay import ReplayedTurn, ReplayHistory

__all__ = [
    "ApprovalDecision",
    "PublishFailure",
    "ToolHistoryCallbackHandler",
    "ToolHistoryPublishError",
    "approval_decision_of",
    "search_history_answer",
    "search_history_tool",
    "splice_tool_history",
    "to_langchain_messages",
]

# An approval's reason or a failure's message is for a person to read, not a payload: longer text is cut.
_MAX_REASON_LENGTH = 4_000
_MAX_FAILURE_MESSAGE_LENGTH = 4_000


# --------------------------------------------------------------------------------------------------
# Pure mapping: LangChain objects in, contract values out.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool run produced, as a ToolResultReceived carries it."""

    result: JsonValue
    is_error: bool


def to_json_value(value: object) -> JsonValue:
    """A value as JSON (what ``json.dumps`` keeps of it); a value JSON cannot hold becomes its string form."""
    if isinstance(value, str):
        return value
    try:
        parsed: JsonValue = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return str(value)
    return parsed


def to_json_object(value: object) -> JsonObject:
    """A tool call's arguments as the contract wants them: a JSON object (anything else as ``{"input": ...}``)."""
    json_value = to_json_value(value)
    if isinstance(json_value, dict):
        return json_value
    return {} if json_value is None else {"input": json_value}


def tool_calls_of(message: object) -> list[RecordedToolCall]:
    """A model output's tool calls, as round 0 (sequence = position; an id the model did not give is ``""``).

    The handler gives them their round; a message that is no AIMessage has none.
    """
    if not isinstance(message, AIMessage):
        return []
    return [
        RecordedToolCall(
            round_index=0,
            sequence_index=sequence_index,
            tool_call_id=call.get("id") or "",
            tool_name=call["name"],
            arguments=to_json_object(call.get("args")),
        )
        for sequence_index, call in enumerate(message.tool_calls)
    ]


def token_usage_of(
    message: object, llm_output: Mapping[str, Any] | None = None, called_model: str | None = None
) -> TokenUsage | None:
    """One model call's tokens: the message's ``usage_metadata``, else the provider's ``llm_output`` token counts.

    None when the call reports none. The model is the one the response names, else the one it was called with.
    """
    usage = message.usage_metadata if isinstance(message, AIMessage) else None
    legacy = (llm_output or {}).get("token_usage")
    legacy = legacy if isinstance(legacy, Mapping) else {}
    input_tokens = usage["input_tokens"] if usage is not None else legacy.get("prompt_tokens")
    output_tokens = usage["output_tokens"] if usage is not None else legacy.get("completion_tokens")
    if not _is_count(input_tokens) or not _is_count(output_tokens):
        return None
    metadata = message.response_metadata if isinstance(message, BaseMessage) else {}
    model = next(
        (
            candidate
            for candidate in (metadata.get("model_name"), metadata.get("model"), called_model)
            if isinstance(candidate, str) and 0 < len(candidate) <= MAX_ID_LENGTH
        ),
        None,
    )
    return TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens, model=model)


def tool_messages_in(output: object) -> list[ToolMessage]:
    """The ToolMessages an output carries: itself, a list of them, ``{"messages": [...]}`` or a Command's update."""
    if isinstance(output, ToolMessage):
        return [output]
    if isinstance(output, Command):
        return tool_messages_in(output.update)
    if isinstance(output, (list, tuple)):
        return [message for item in output for message in tool_messages_in(item)]
    if isinstance(output, Mapping):
        messages = output.get("messages")
        if isinstance(messages, (list, tuple)):
            return [message for message in messages if isinstance(message, ToolMessage)]
    return []


def tool_outcome_of(output: object, tool_call_id: str | None = None) -> ToolOutcome:
    """What the model is given back for a tool run's output.

    A ToolMessage's content (``status="error"`` makes it an error result), a
    Command's ToolMessage for the call, or the plain value a tool returned when
    it was called without a tool call. Never None (the contract refuses null).
    """
    message = (
        output
        if isinstance(output, ToolMessage)
        else next((m for m in tool_messages_in(output) if not tool_call_id or m.tool_call_id == tool_call_id), None)
    )
    if message is not None:
        return ToolOutcome(result=_non_null(to_json_value(message.content)), is_error=message.status == "error")
    return ToolOutcome(result=_non_null(to_json_value(output)), is_error=False)


def error_result_of(error: BaseException) -> str:
    """The text an error result records: the error's class and message, e.g. ``ValueError: card declined``."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def failure_of(error: BaseException) -> RunFailure:
    """RunFailed's error: LangChain's error code or the error's string ``code``, else its class name; its message."""
    code = next(
        (
            candidate
            for candidate in (getattr(error, "lc_error_code", None), getattr(error, "code", None))
            if isinstance(candidate, str) and candidate
        ),
        type(error).__name__,
    )
    message = str(error) or type(error).__name__
    return RunFailure(code=code[:MAX_ID_LENGTH], message=message[:_MAX_FAILURE_MESSAGE_LENGTH])


# --------------------------------------------------------------------------------------------------
# Approvals: LangGraph's interrupt() inside a tool, and the value Command(resume=...) answers it with.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApprovalDecision:
    """What a resume value says about an approval."""

    approved: bool
    reason: str | None = None
    decided_by: str | None = None


_APPROVING = frozenset({"approve", "approved", "accept", "accepted", "allow", "allowed", "confirm", "confirmed"})
_APPROVING_TOO = frozenset({"edit", "yes", "y"})
_DENYING = frozenset({"deny", "denied", "reject", "rejected", "decline", "declined", "refuse", "refused", "ignore"})
_DENYING_TOO = frozenset({"no", "n"})


def approval_decision_of(resume: object) -> ApprovalDecision | None:
    """What a resume value says about approval, when it says it in a way the adapter recognises; None otherwise.

    Recognised (anything else is the tool's own business, no decision is recorded):

    - ``True`` or ``False``;
    - a word: approve(d), accept(ed), allow(ed), confirm(ed), edit, yes, y (approved);
      deny/denied, reject(ed), decline(d), refuse(d), ignore, no, n (denied);
    - a mapping with ``approved`` (or ``approve``) a bool, or ``decision``, ``action`` or ``type``
      one of those words (LangGraph's Agent Inbox answers with ``type`` accept, edit, ignore or
      response; ``response`` says nothing about approval), with the text of ``reason``, ``message``
      or ``comment`` as the reason and ``decided_by`` (or ``decidedBy``) as who decided;
    - ``{"decisions": [one such mapping]}`` (LangChain's human-in-the-loop middleware).
    """
    if isinstance(resume, bool):
        return ApprovalDecision(approved=resume)
    if isinstance(resume, str):
        return _word_decision(resume)
    if not isinstance(resume, Mapping):
        return None
    decisions = resume.get("decisions")
    if isinstance(decisions, (list, tuple)):
        return approval_decision_of(decisions[0]) if len(decisions) == 1 else None
    flag = next((value for value in (resume.get("approved"), resume.get("approve")) if isinstance(value, bool)), None)
    word = _text_field(resume, ("decision", "action", "type"))
    decision = ApprovalDecision(approved=flag) if flag is not None else _word_decision(word) if word else None
    if decision is None:
        return None
    reason = _text_field(resume, ("reason", "message", "comment"))
    decided_by = _text_field(resume, ("decided_by", "decidedBy"))
    return ApprovalDecision(
        approved=decision.approved,
        reason=reason[:_MAX_REASON_LENGTH] if reason else None,
        decided_by=decided_by if decided_by and len(decided_by) <= MAX_ID_LENGTH else None,
    )


def interrupt_reason_of(interrupt: GraphInterrupt) -> str | None:
    """Why the interrupt asks, as text for a person: its value when that is a string, else the value's
    ``reason``, ``message`` or ``description`` text. Any other value gives no reason: it is no text to show,
    and could carry what the retention policy would not keep.
    """
    for pending in _interrupts_of(interrupt):
        value = getattr(pending, "value", None)
        text = value if isinstance(value, str) else _text_field(value, ("reason", "message", "description"))
        if text is not None and text.strip():
            return text[:_MAX_REASON_LENGTH]
    return None


def interrupt_id_of(interrupt: GraphInterrupt) -> str | None:
    """The id LangGraph gave the interrupt: a Command may resume several interrupts with a value per id."""
    return next(
        (
            pending.id
            for pending in _interrupts_of(interrupt)
            if isinstance(getattr(pending, "id", None), str) and pending.id
        ),
        None,
    )


def resume_value_for(resume: object, interrupt_id: str | None) -> object:
    """The value a Command resumes the interrupt ``interrupt_id`` with: its entry when the value maps interrupt ids."""
    if interrupt_id is not None and isinstance(resume, Mapping) and interrupt_id in resume:
        return resume[interrupt_id]
    return resume


@dataclass(frozen=True)
class CallPosition:
    """Where a call sits in its run: round, sequence, tool, and how many calls its round has."""

    round_index: int
    sequence_index: int
    tool_name: str
    calls_in_round: int


def call_position_in(messages: Sequence[BaseMessage], tool_call_id: str) -> CallPosition | None:
    """Where the model's call ``tool_call_id`` sits, by the agent's messages (its graph state).

    Its index in its AIMessage's ``tool_calls``, and the count of AIMessages
    with tool calls since the last HumanMessage before it. Right when the
    call's run began at that HumanMessage; a run that itself resumed an
    interrupt leaves no mark in the messages, so for a call made after a
    resume, give the handler the replay's ``pending_approvals`` instead.
    """
    for at in range(len(messages) - 1, -1, -1):
        calls = _tool_calls_in(messages[at])
        sequence_index = next((i for i, call in enumerate(calls) if call.get("id") == tool_call_id), None)
        if sequence_index is None:
            continue
        round_index = 0
        for earlier in reversed(messages[:at]):
            if isinstance(earlier, HumanMessage):
                break
            if _tool_calls_in(earlier):
                round_index += 1
        return CallPosition(round_index, sequence_index, calls[sequence_index]["name"], len(calls))
    return None


# --------------------------------------------------------------------------------------------------
# Ordered publication.
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublishFailure:
    """One publication that did not reach the broker (or was refused before it was sent)."""

    event: str
    """What was being published, e.g. ``ToolResultReceived round 0 call 1 (get_customer call_b)``."""
    error: BaseException


class ToolHistoryPublishError(Exception):
    """Some of a run's events were not published: each failure, and what the broker did acknowledge."""

    def __init__(self, failures: Sequence[PublishFailure], published: Sequence[PublishedEvent]) -> None:
        self.failures: tuple[PublishFailure, ...] = tuple(failures)
        self.published: tuple[PublishedEvent, ...] = tuple(published)
        listed = "; ".join(f"{failure.event}: {failure.error}" for failure in self.failures)
        super().__init__(f"{len(self.failures)} tool history event(s) not published: {listed}")


_Published = TypeVar("_Published")


class _OrderedPublications:
    """Publishes one step after the other, in the order they were submitted, whether or not an earlier one failed.

    A run's events stay in order on the conversation's partition even when
    LangChain calls the handler from several threads at once (parallel tools,
    or the executor threads it runs a sync handler's callbacks on in an async
    graph): each step is submitted while the handler holds its state lock,
    and one worker thread runs them, first in first out. The callback that
    submitted a step waits for it, so the agent's invocation returns once its
    events are acknowledged.
    """

    def __init__(self, on_failure: Callable[[PublishFailure], None] | None) -> None:
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._closed = False
        self._tail: Future[object] | None = None
        self._acknowledged: list[PublishedEvent] = []
        self._failures: list[PublishFailure] = []

    def submit(self, event: str, step: Callable[[], _Published]) -> Future[_Published]:
        """Runs ``step`` once every step submitted before it has finished; the future is the step's own outcome."""

        def run() -> _Published:
            try:
                published = step()
            except BaseException as error:
                self.record_failure(PublishFailure(event=event, error=error))
                raise
            with self._lock:
                produced: object = published
                self._acknowledged.extend(
                    cast("list[PublishedEvent]", produced if isinstance(produced, list) else [produced])
                )
            return published

        with self._lock:
            if self._closed:
                raise RuntimeError(f"ToolHistoryCallbackHandler: {event} after the run ended")
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolhistory-publish")
            future = self._worker.submit(run)
            self._tail = future  # type: ignore[assignment]
        return future

    def record_failure(self, failure: PublishFailure) -> None:
        """A failure that is no publication (e.g. the handler used wrongly) is reported like one."""
        with self._lock:
            self._failures.append(failure)
        if self._on_failure is not None:
            # The listener's own failure must not hide the recorded one.
            with contextlib.suppress(Exception):
                self._on_failure(failure)

    def close(self) -> None:
        """No more steps: the worker thread ends once the submitted ones have run."""
        with self._lock:
            self._closed = True
            if self._worker is not None:
                self._worker.shutdown(wait=False)

    def settled(self, timeout: float | None) -> list[PublishedEvent]:
        while True:
            with self._lock:
                tail = self._tail
            if tail is None:
                break
            # The step's own error is recorded as a failure: only its end matters here.
            tail.exception(timeout)
            with self._lock:
                if tail is self._tail:
                    break
        with self._lock:
            if self._failures:
                raise ToolHistoryPublishError(self._failures, self._acknowledged)
            return list(self._acknowledged)


# --------------------------------------------------------------------------------------------------
# The callback handler.
# --------------------------------------------------------------------------------------------------


class PendingApproval(Protocol):
    """A call awaiting approval as the replay lists it (``ReplayHistory.pending_approvals`` or the proto's)."""

    @property
    def tool_call_id(self) -> str: ...
    @property
    def round_index(self) -> int: ...
    @property
    def sequence_index(self) -> int: ...


@dataclass
class _TrackedCall:
    """A call the model asked for, and how far it got."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    # The arguments as canonical JSON: matches a tool run to a call the model gave no id.
    arguments_json: str
    claimed: bool = False
    answered: bool = False
    # The tool interrupted: the run that resumes it may record the decision (interrupt_id picks its resume value).
    awaiting_approval: bool = False
    interrupt_id: str | None = None

    def describe(self) -> str:
        tool_call = f" {self.tool_call_id}" if self.tool_call_id else ""
        return f"round {self.round_index} call {self.sequence_index} ({self.tool_name}{tool_call})"


@dataclass
class _RunInfo:
    kind: Literal["chain", "model", "tool"]
    parent_run_id: UUID | None


@dataclass
class _Resume:
    """The invocation resumes the graph with this value (a Command's ``resume``)."""

    value: object


@dataclass
class _State:
    runs: dict[UUID, _RunInfo] = field(default_factory=dict)
    called_models: dict[UUID, str] = field(default_factory=dict)
    calls: list[_TrackedCall] = field(default_factory=list)
    tool_runs: dict[UUID, _TrackedCall] = field(default_factory=dict)
    usage: list[TokenUsage] = field(default_factory=list)
    agent_run_id: UUID | None = None
    interrupted: bool = False
    ended: bool = False
    rounds: int = 0
    last_output_asked_for_tools: bool = False
    last_assistant_message_id: str | None = None
    last_output_text: str | None = None
    """The text of the model's last output (the answer, when it asked for no tools); None before the first."""
    resume: _Resume | None = None
    state_messages: Sequence[BaseMessage] = ()


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

    One handler per agent run.
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
        """Record to ``run`` (a RunPublisher, its scope fixed), or to ``publisher.run(...)`` of ``scope``.

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
        self._opener = opener
        self._opened_run: RunPublisher | None = run
        self._assistant_message_id = assistant_message_id
        self._finish_reason_after_tools = finish_reason_after_tools
        self._user_message_id = user_message_id
        self._interrupt_ends_run = interrupt_ends_run
        self._pending_approvals = None if pending_approvals is None else list(pending_approvals)
        self._decided_by = decided_by
        self._cited_sources_from_answer = cited_sources_from_answer
        self._lock = threading.RLock()
        self._state = _State()
        self._publications = _OrderedPublications(on_publish_error)

    @property
    def run(self) -> RunPublisher:
        """The run being recorded (with ``publisher`` and ``scope``: opened when the agent run starts, or here)."""
        with self._lock:
            if self._opened_run is None:
                self._opened_run = self._open_run(None)
            return self._opened_run

    def settled(self, timeout: float | None = None) -> list[PublishedEvent]:
        """The events recorded so far, acknowledged, in publication order, once every one has been published.

        Raises:
            ToolHistoryPublishError: when any event could not be published (or the handler was used for a
                second agent run).
        """
        return self._publications.settled(timeout)

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
            state = self._state
            state.runs[run_id] = _RunInfo("chain", parent_run_id)
            if parent_run_id is not None:
                messages = _state_messages_of(inputs)
                if messages is not None and self._recording(parent_run_id):
                    state.state_messages = messages
                return
            if state.ended or state.agent_run_id is not None:
                now = "already ended" if state.ended else f"LangChain run {state.agent_run_id}"
                self._publications.record_failure(
                    PublishFailure(
                        event=f"agent run {run_id}",
                        error=RuntimeError(
                            f"ToolHistoryCallbackHandler records one agent run (run_id {self.run.scope.run_id}, "
                            f"{now}): create a handler per agent run"
                        ),
                    )
                )
                return
            state.agent_run_id = run_id
            if self._opened_run is None:
                self._opened_run = self._open_run(inputs)
            state.resume = _Resume(inputs.resume) if isinstance(inputs, Command) and inputs.resume is not None else None

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
            state = self._state
            called_model = state.called_models.pop(run_id, None)
            if not self._recording(parent_run_id):
                return
            generation = response.generations[0][0] if response.generations and response.generations[0] else None
            message = generation.message if isinstance(generation, ChatGeneration) else None
            usage = token_usage_of(message, response.llm_output, called_model)
            if usage is not None:
                state.usage.append(usage)
            if message is not None and isinstance(message.id, str) and message.id:
                state.last_assistant_message_id = message.id
            if generation is not None:
                state.last_output_text = str(message.text) if message is not None else generation.text
            calls = tool_calls_of(message)
            state.last_output_asked_for_tools = bool(calls)
            if not calls:
                return
            round_index = state.rounds
            state.rounds += 1
            occurred_at = _now()
            recorded = [dataclasses.replace(call, round_index=round_index, occurred_at=occurred_at) for call in calls]
            tracked = [
                _TrackedCall(
                    round_index=round_index,
                    sequence_index=call.sequence_index,
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    arguments_json=_canonical_json(call.arguments),
                )
                for call in recorded
            ]
            state.calls.extend(tracked)
            described = ", ".join(call.describe() for call in tracked)
            run = self.run
            pending = self._publications.submit(f"ToolCallRequested {described}", lambda: run.tool_calls(recorded))
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
            self._state.runs[run_id] = _RunInfo("tool", parent_run_id)
            if not self._recording(parent_run_id):
                return
            tool_call_id = kwargs.get("tool_call_id")
            tool_call_id = tool_call_id if isinstance(tool_call_id, str) else None
            tool_name = kwargs.get("name") or (serialized or {}).get("name")
            arguments_json = _canonical_json(to_json_object(inputs)) if inputs is not None else None
            call = self._pending_call(
                tool_call_id, tool_name if isinstance(tool_name, str) else None, False, arguments_json
            ) or self._resumed_call(tool_call_id)
            if call is None:
                return
            call.claimed = True
            self._state.tool_runs[run_id] = call
            pending = self._decide(call)
        if pending is not None:
            pending.result()

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            call = self._state.tool_runs.pop(run_id, None)
            if call is None and self._recording(parent_run_id):
                call = self._call_answered_by(output)
            if call is None or call.answered:
                return
            pending = self._publish_result(call, tool_outcome_of(output, call.tool_call_id))
        pending.result()

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            call = self._state.tool_runs.pop(run_id, None)
            if call is None or call.answered:
                return
            if isinstance(error, GraphInterrupt):
                pending = self._request_approval(call, error)
            elif isinstance(error, GraphBubbleUp):
                # A command for the parent graph: the call is still to be answered when the run goes on.
                call.claimed = False
                pending = None
            else:
                pending = self._publish_result(call, ToolOutcome(result=error_result_of(error), is_error=True))
        if pending is not None:
            pending.result()

    def on_chain_end(
        self, outputs: dict[str, Any], *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            if run_id == self._state.agent_run_id:
                pending: list[Future[Any]] = [p for p in [self._agent_run_ended()] if p is not None]
            elif not self._recording(parent_run_id):
                return
            else:
                # Calls no tool run answered (an unknown tool, arguments its schema refused): the tool node answered.
                pending = []
                for message in tool_messages_in(outputs):
                    call = self._pending_call(message.tool_call_id, None, False) if message.tool_call_id else None
                    if call is not None:
                        pending.append(self._publish_result(call, tool_outcome_of(message)))
        for publication in pending:
            publication.result()

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        with self._lock:
            state = self._state
            if run_id != state.agent_run_id or state.ended:
                return
            if isinstance(error, GraphBubbleUp) or state.interrupted:
                pending = self._interrupted_run_ended()
            else:
                self._end()
                failure = failure_of(error)
                occurred_at = _now()
                run = self.run
                pending = self._publications.submit(
                    "RunFailed", lambda: run.fail(error=failure, usage=self._usage(), occurred_at=occurred_at)
                )
                self._publications.close()
        if pending is not None:
            pending.result()

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        """LangGraph: the root graph paused at an interrupt; its ``on_chain_end`` follows."""
        with self._lock:
            if event.run_id is None or event.run_id == self._state.agent_run_id:
                self._state.interrupted = True

    # ---- internals -----------------------------------------------------------------------------

    def _open_run(self, inputs: object) -> RunPublisher:
        if self._opener is None:
            raise RuntimeError("ToolHistoryCallbackHandler: no run to record to")  # __init__ opened it from `run`
        publisher, scope = self._opener
        return publisher.run(
            tenant_id=scope.tenant_id,
            conversation_id=scope.conversation_id,
            channel=scope.channel,
            run_id=scope.run_id,
            user_message_id=self._user_message_id or _last_human_message_id(inputs) or scope.user_message_id,
        )

    def _model_started(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, invocation: object
    ) -> None:
        params = invocation if isinstance(invocation, Mapping) else {}
        candidates = ((metadata or {}).get("ls_model_name"), params.get("model"), params.get("model_name"))
        model = next((m for m in candidates if isinstance(m, str) and m), None)
        with self._lock:
            self._state.runs[run_id] = _RunInfo("model", parent_run_id)
            if model is not None:
                self._state.called_models[run_id] = model

    def _recording(self, parent_run_id: UUID | None) -> bool:
        """Whether a run under ``parent_run_id`` belongs to the agent's loop: not after the run ended, and not
        inside a tool (a tool's own model and tool calls are no round of this run)."""
        state = self._state
        if state.ended:
            return False
        seen: set[UUID] = set()
        current = parent_run_id
        while current is not None and current not in seen:
            info = state.runs.get(current)
            if info is None:
                break
            if info.kind == "tool":
                return False
            seen.add(current)
            current = info.parent_run_id
        return True

    def _pending_call(
        self, tool_call_id: str | None, tool_name: str | None, include_claimed: bool, arguments_json: str | None = None
    ) -> _TrackedCall | None:
        """The unanswered call a tool run or ToolMessage belongs to: by tool call id; without one (the model gave
        none), by tool name and arguments, else by name: the first in call order of the latest round that has one."""
        open_calls = [c for c in self._state.calls if not c.answered and (include_claimed or not c.claimed)]
        if tool_call_id:
            return _latest_round_first([c for c in open_calls if c.tool_call_id == tool_call_id])
        if tool_name is None:
            return None
        named = [c for c in open_calls if c.tool_name == tool_name]
        return _latest_round_first([c for c in named if c.arguments_json == arguments_json]) or _latest_round_first(
            named
        )

    def _resumed_call(self, tool_call_id: str | None) -> _TrackedCall | None:
        """A tool the resumed graph runs again for a call of an earlier run (one this handler did not see asked for).

        Placed by ``pending_approvals``, else by the agent's messages. LangGraph runs the whole tool node again, so
        the other calls of an interrupted round may run again too: without ``pending_approvals`` a call is taken as
        the one that waited only when it is its round's one call (which of several interrupted, the callbacks do not
        tell); the others' first results are in the run that first ran them.
        """
        state = self._state
        if state.resume is None or not tool_call_id or any(c.tool_call_id == tool_call_id for c in state.calls):
            return None
        placed = call_position_in(state.state_messages, tool_call_id)
        if self._pending_approvals is None:
            position = (placed.round_index, placed.sequence_index) if placed and placed.calls_in_round == 1 else None
        else:
            listed = next((p for p in reversed(self._pending_approvals) if p.tool_call_id == tool_call_id), None)
            position = (listed.round_index, listed.sequence_index) if listed is not None else None
        if position is None:
            return None
        call = _TrackedCall(
            round_index=position[0],
            sequence_index=position[1],
            tool_call_id=tool_call_id,
            tool_name=placed.tool_name if placed else "",
            arguments_json="",
            awaiting_approval=True,
        )
        state.calls.append(call)
        return call

    def _request_approval(self, call: _TrackedCall, interrupt: GraphInterrupt) -> Future[PublishedEvent] | None:
        """The tool interrupted: its call waits for a person (ToolApprovalRequested) until the graph resumes."""
        call.claimed = False
        call.awaiting_approval = True
        call.interrupt_id = interrupt_id_of(interrupt)
        # The contract names an approval's call by its id: a call the model gave none is left waiting, unrecorded.
        if not call.tool_call_id:
            return None
        reason = interrupt_reason_of(interrupt)
        occurred_at = _now()
        run = self.run
        return self._publications.submit(
            f"ToolApprovalRequested {call.describe()}",
            lambda: run.approval_requested(
                round_index=call.round_index,
                sequence_index=call.sequence_index,
                tool_call_id=call.tool_call_id,
                reason=reason,
                occurred_at=occurred_at,
            ),
        )

    def _decide(self, call: _TrackedCall) -> Future[PublishedEvent] | None:
        """A call awaiting approval that the graph resumes: ToolApprovalDecided when the resume value says so."""
        resume = self._state.resume
        if not call.awaiting_approval or resume is None:
            return None
        call.awaiting_approval = False
        decision = approval_decision_of(resume_value_for(resume.value, call.interrupt_id))
        if decision is None or not call.tool_call_id:
            return None
        decided_by = decision.decided_by or self._decided_by
        occurred_at = _now()
        run = self.run
        return self._publications.submit(
            f"ToolApprovalDecided {call.describe()}",
            lambda: run.approval_decided(
                round_index=call.round_index,
                sequence_index=call.sequence_index,
                tool_call_id=call.tool_call_id,
                approved=decision.approved,
                reason=decision.reason,
                decided_by=decided_by,
                occurred_at=occurred_at,
            ),
        )

    def _call_answered_by(self, output: object) -> _TrackedCall | None:
        """A tool run that could not be matched at its start: the call its ToolMessage answers."""
        messages = tool_messages_in(output)
        tool_call_id = messages[0].tool_call_id if messages else None
        return self._pending_call(tool_call_id, None, True) if tool_call_id else None

    def _publish_result(self, call: _TrackedCall, outcome: ToolOutcome) -> Future[PublishedEvent]:
        call.answered = True
        occurred_at = _now()
        run = self.run
        return self._publications.submit(
            f"ToolResultReceived {call.describe()}",
            lambda: run.tool_result(
                round_index=call.round_index,
                sequence_index=call.sequence_index,
                tool_call_id=call.tool_call_id,
                # A call of an earlier run: the publisher learns its tool (for the per-tool result limit) only here.
                tool_name=call.tool_name or None,
                result=outcome.result,
                is_error=outcome.is_error,
                occurred_at=occurred_at,
            ),
        )

    def _agent_run_ended(self) -> Future[PublishedEvent] | None:
        state = self._state
        if state.ended:
            return None
        if state.interrupted:
            return self._interrupted_run_ended()
        return self._complete_run()

    def _interrupted_run_ended(self) -> Future[PublishedEvent] | None:
        """The graph paused: the run stays open for this handler, or ends (``interrupt_ends_run``)."""
        if not self._interrupt_ends_run:
            self._pause()
            return None
        # Its last round's results did not all reach the model: it ends as after tools.
        self._state.last_output_asked_for_tools = True
        return self._complete_run()

    def _complete_run(self) -> Future[PublishedEvent]:
        state = self._state
        assistant_message_id = (
            self._assistant_message_id or state.last_assistant_message_id or f"run-{state.agent_run_id}"
        )
        answered = not state.last_output_asked_for_tools
        finish_reason = "stop" if answered else self._finish_reason_after_tools
        answer = state.last_output_text if self._cited_sources_from_answer and answered else None
        cited_sources = None if answer is None else cited_sources_from(answer)
        usage = self._usage()
        occurred_at = _now()
        self._end()
        run = self.run
        pending = self._publications.submit(
            "RunCompleted",
            lambda: run.complete(
                assistant_message_id=assistant_message_id,
                finish_reason=finish_reason,
                usage=usage,
                cited_sources=cited_sources,
                occurred_at=occurred_at,
            ),
        )
        self._publications.close()
        return pending

    def _usage(self) -> list[TokenUsage] | None:
        return bounded_usage(self._state.usage) if self._state.usage else None

    def _pause(self) -> None:
        """The run stays open: a resumed invocation with this handler goes on with it."""
        state = self._state
        state.agent_run_id = None
        state.interrupted = False
        state.resume = None
        state.runs.clear()
        state.tool_runs.clear()
        for call in state.calls:
            call.claimed = False

    def _end(self) -> None:
        state = self._state
        state.ended = True
        state.runs.clear()
        state.tool_runs.clear()
        state.called_models.clear()


# --------------------------------------------------------------------------------------------------
# Replay: the service's history as LangChain messages.
# --------------------------------------------------------------------------------------------------


def to_langchain_messages(
    history: ReplayHistory | Sequence[ReplayedTurn] | toolhistory_pb2.GetReplayHistoryResponse | Sequence[Any],
) -> list[BaseMessage]:
    """LangChain's messages for replayed tool history, to put before the user's new message.

    Per round one AIMessage with the round's ``tool_calls`` (id, name, args), then one ToolMessage per call in
    order (``status="error"`` for an error result). Takes a :class:`~toolhistory.replay.ReplayHistory` (or its
    turns, or the gRPC response's turns): built from each turn's rounds, which carry the error flag in every
    format; a turn fetched with the messages view only (no rounds) is read from its OpenAI messages (fetch it with
    ``format="openai"``), where an error result is not marked. A list of OpenAI chat messages (assistant messages
    with ``tool_calls`` and ``tool`` messages) is read as such.
    """
    turns = getattr(history, "turns", None)
    items = cast("Sequence[Any]", history if turns is None else turns)
    if all(isinstance(item, Mapping) for item in items):
        return _openai_to_messages(items)
    history_format = getattr(history, "format", None)
    return [message for turn in items for message in _turn_to_messages(turn, history_format)]


@dataclass(frozen=True)
class _LangChainTurn:
    """A replayed turn with its tool segment as LangChain messages: what splicing places."""

    assistant_message_id: str | None
    after_message_id: str | None
    messages: list[BaseMessage]


def splice_tool_history(
    messages: Sequence[BaseMessage], history: ReplayHistory | Sequence[ReplayedTurn]
) -> list[BaseMessage]:
    """The host's conversation with each replayed turn's tool rounds as LangChain messages.

    Placed by :func:`toolhistory.splice.splice_history` with LangChain's message ids: right before the host's
    message whose id is the turn's ``assistant_message_id`` (the run's final answer), left out when the host no
    longer has it; a turn without one (a failed or running run) right after its ``after_message_id`` message, else
    after the last message. ``messages`` is not modified.
    """
    from toolhistory.splice import splice_history

    history_format = getattr(history, "format", None)
    turns: Sequence[ReplayedTurn] = history.turns if hasattr(history, "turns") else history
    converted = [
        _LangChainTurn(turn.assistant_message_id, turn.after_message_id, _turn_to_messages(turn, history_format))
        for turn in turns
    ]
    spliced: list[BaseMessage] = splice_history(messages, converted, id_of=lambda message: message.id)
    return spliced


def _turn_to_messages(turn: Any, history_format: object) -> list[BaseMessage]:
    raw = getattr(turn, "raw", turn)
    rounds = getattr(raw, "rounds", None) or ()
    if rounds:
        return [message for round_ in rounds for message in _round_to_messages(round_)]
    messages = getattr(turn, "messages", None)
    if messages is None and isinstance(getattr(turn, "messages_json", None), str) and turn.messages_json:
        messages = json.loads(turn.messages_json)
    if not messages:
        return []
    if history_format not in (None, "openai"):
        raise ValueError(
            f"to_langchain_messages: a turn without rounds is read from OpenAI messages, and this history's format "
            f"is {history_format!r}: fetch it with format='openai' (or with rounds)"
        )
    return _openai_to_messages(messages)


def _round_to_messages(round_: Any) -> list[BaseMessage]:
    calls = list(round_.calls)
    return [
        AIMessage(
            content="",
            tool_calls=[
                {
                    "type": "tool_call",
                    "id": call.tool_call_id,
                    "name": call.tool_name,
                    "args": _parse_arguments(call.arguments_json, call.tool_call_id),
                }
                for call in calls
            ],
        ),
        *(
            ToolMessage(
                content=call.result,
                tool_call_id=call.tool_call_id,
                name=call.tool_name,
                status="error" if call.is_error else "success",
            )
            for call in calls
        ),
    ]


def _openai_to_messages(messages: Sequence[Any]) -> list[BaseMessage]:
    names: dict[str, str] = {}
    converted: list[BaseMessage] = []
    for message in messages:
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "assistant":
            tool_calls = []
            for call in message.get("tool_calls") or []:
                function = call["function"]
                names[call["id"]] = function["name"]
                tool_calls.append(
                    {
                        "type": "tool_call",
                        "id": call["id"],
                        "name": function["name"],
                        "args": _parse_arguments(function.get("arguments") or "", call["id"]),
                    }
                )
            converted.append(AIMessage(content=message.get("content") or "", tool_calls=tool_calls))
        elif role == "tool":
            tool_call_id = message["tool_call_id"]
            converted.append(
                ToolMessage(
                    content=message.get("content") or "", tool_call_id=tool_call_id, name=names.get(tool_call_id)
                )
            )
        else:
            raise TypeError(f"to_langchain_messages: unexpected message role {role!r} (OpenAI tool history expected)")
    return converted


def _parse_arguments(arguments_json: str, tool_call_id: str) -> dict[str, Any]:
    try:
        parsed = json.loads(arguments_json or "{}")
    except ValueError as error:
        raise ValueError(f"to_langchain_messages: the arguments of tool call {tool_call_id!r} are not JSON") from error
    return parsed if isinstance(parsed, dict) else {"input": parsed}


# --------------------------------------------------------------------------------------------------
# Search: the agent's own tool history as a tool it can call.
# --------------------------------------------------------------------------------------------------

SEARCH_HISTORY_TOOL_NAME = "search_history"
SEARCH_HISTORY_TOOL_DESCRIPTION = (
    "Search the tool calls made earlier in this conversation: their tool names, arguments and results. "
    'match "substring" finds a literal text anywhere, inside words too, in any case (at least 3 characters), '
    "newest first; "
    'match "words" finds whole words (free text: "a phrase", -excluded, or), best first. '
    "Answers the hits: tool, when, where it matched (call and/or result), a snippet with the match in ** **, "
    "and the run."
)
SEARCH_HISTORY_MAX_LIMIT = 20
"""At most this many hits per call: the answer goes back into the model's context."""
_SEARCH_HISTORY_DEFAULT_LIMIT = 5


class SearchHistoryInput(BaseModel):
    """What the model sends to ``search_history`` (the same input as the TypeScript client's tool)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="The text to look for")
    match: Literal["words", "substring"] | None = Field(
        default=None, description="substring: a literal text anywhere (at least 3 characters); words: whole words"
    )
    limit: int = Field(
        default=_SEARCH_HISTORY_DEFAULT_LIMIT,
        ge=1,
        le=SEARCH_HISTORY_MAX_LIMIT,
        description=f"Most hits to return (default {_SEARCH_HISTORY_DEFAULT_LIMIT})",
    )


def search_history_tool(
    client: ToolHistoryClient | AsyncToolHistoryClient,
    *,
    tenant_id: str,
    conversation_id: str,
    default_match: SearchMatch = "substring",
) -> StructuredTool:
    """A LangChain tool ``search_history`` with which the model searches the tool calls made earlier in the
    conversation it runs in (SearchToolHistory limited to ``conversation_id``, so a token with ``history:read``
    for the tenant is enough).

    Input: ``query``, ``match`` (``"words"`` or ``"substring"``; ``default_match`` when the model leaves it out)
    and ``limit`` (1 to 20, default 5). Answer, the ToolMessage's content: JSON text
    ``{"hits": [{"tool", "at", "matchedIn": ["call" | "result"], "snippet", "runId", "toolCallId"}]}``, as the
    TypeScript client's tool answers. A query the service refuses (a substring under 3 characters) is answered
    to the model as the tool's error text; any other failure raises :class:`~toolhistory.errors.ToolHistoryError`.

    With a :class:`~toolhistory.client.ToolHistoryClient` the tool runs sync and async (``ainvoke`` runs the call
    on LangChain's executor); with an :class:`~toolhistory.aio.AsyncToolHistoryClient` it runs async only.
    """
    if default_match not in ("words", "substring"):
        raise ValueError(f"search_history_tool: default_match must be 'words' or 'substring', not {default_match!r}")

    def arguments(query: str, match: SearchMatch | None, limit: int) -> dict[str, Any]:
        return {
            "tenant_id": tenant_id,
            "conversation_id": conversation_id,
            "query": query,
            "match": match or default_match,
            "limit": limit,
        }

    if isinstance(client, AsyncToolHistoryClient):
        async_client = client

        async def search_async(
            query: str, match: SearchMatch | None = None, limit: int = _SEARCH_HISTORY_DEFAULT_LIMIT
        ) -> str:
            with _refused_query_to_the_model():
                response = await async_client.search_tool_history(**arguments(query, match, limit))
            return search_history_answer(response)

        return StructuredTool.from_function(
            coroutine=search_async,
            name=SEARCH_HISTORY_TOOL_NAME,
            description=SEARCH_HISTORY_TOOL_DESCRIPTION,
            args_schema=SearchHistoryInput,
            handle_tool_error=True,
        )

    sync_client = client

    def search(query: str, match: SearchMatch | None = None, limit: int = _SEARCH_HISTORY_DEFAULT_LIMIT) -> str:
        with _refused_query_to_the_model():
            response = sync_client.search_tool_history(**arguments(query, match, limit))
        return search_history_answer(response)

    return StructuredTool.from_function(
        func=search,
        name=SEARCH_HISTORY_TOOL_NAME,
        description=SEARCH_HISTORY_TOOL_DESCRIPTION,
        args_schema=SearchHistoryInput,
        handle_tool_error=True,
    )


def search_history_answer(response: toolhistory_pb2.SearchToolHistoryResponse) -> str:
    """The ``search_history`` tool's answer to the model: the hits, compact, as JSON text."""
    return json.dumps({"hits": [_compact_hit(hit) for hit in response.hits]}, ensure_ascii=False)


def _compact_hit(hit: toolhistory_pb2.SearchHit) -> dict[str, Any]:
    matched_in: list[str] = []
    for where in hit.matched_in:
        side = _SEARCH_HIT_SIDE.get(where)
        if side is not None and side not in matched_in:
            matched_in.append(side)
    invocation = hit.invocation
    when = (
        invocation.requested_at
        if invocation.HasField("requested_at")
        else invocation.completed_at
        if invocation.HasField("completed_at")
        else None
    )
    return {
        "tool": invocation.tool_name,
        "at": _iso_millis(when.ToDatetime(tzinfo=timezone.utc)) if when is not None else None,
        "matchedIn": matched_in,
        "snippet": hit.snippet,
        "runId": invocation.run_id,
        "toolCallId": invocation.tool_call_id,
    }


# The call is the tool name and its arguments; the result is the result.
_SEARCH_HIT_SIDE: Mapping[int, str] = {
    toolhistory_pb2.SEARCH_HIT_FIELD_TOOL_NAME: "call",
    toolhistory_pb2.SEARCH_HIT_FIELD_ARGUMENTS: "call",
    toolhistory_pb2.SEARCH_HIT_FIELD_RESULT: "result",
}


@contextlib.contextmanager
def _refused_query_to_the_model() -> Iterator[None]:
    """A query the service refuses is the model's to correct: its message becomes the tool's error answer."""
    try:
        yield
    except ToolHistoryError as error:
        if error.code == grpc.StatusCode.INVALID_ARGUMENT:
            raise ToolException(error.details) from error
        raise


def _iso_millis(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and ``Z``, as JavaScript's ``toISOString`` writes it."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# --------------------------------------------------------------------------------------------------
# Small helpers.
# --------------------------------------------------------------------------------------------------


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _canonical_json(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INDEX


def _non_null(value: JsonValue) -> JsonValue:
    return "" if value is None else value


def _word_decision(word: str) -> ApprovalDecision | None:
    normalized = word.strip().lower()
    if normalized in _APPROVING or normalized in _APPROVING_TOO:
        return ApprovalDecision(approved=True)
    if normalized in _DENYING or normalized in _DENYING_TOO:
        return ApprovalDecision(approved=False)
    return None


def _text_field(value: object, names: Sequence[str]) -> str | None:
    if not isinstance(value, Mapping):
        return None
    return next((value[name] for name in names if isinstance(value.get(name), str)), None)


def _interrupts_of(interrupt: GraphInterrupt) -> Sequence[Any]:
    pending = interrupt.args[0] if interrupt.args else ()
    return pending if isinstance(pending, (list, tuple)) else ()


def _tool_calls_in(message: BaseMessage) -> list[Any]:
    return list(message.tool_calls) if isinstance(message, AIMessage) else []


def _latest_round_first(calls: Sequence[_TrackedCall]) -> _TrackedCall | None:
    """The first (in call order) of the calls of the latest round among ``calls``."""
    if not calls:
        return None
    latest = calls[-1].round_index
    return next(call for call in calls if call.round_index == latest)


def _state_messages_of(inputs: object) -> Sequence[BaseMessage] | None:
    """The agent's messages a node of the loop got: ``{"messages": [...]}``, or a ToolNode task's ``state``."""
    if not isinstance(inputs, Mapping):
        return None
    messages = inputs.get("messages")
    if messages is None and isinstance(inputs.get("state"), Mapping):
        messages = inputs["state"].get("messages")
    if isinstance(messages, (list, tuple)) and all(isinstance(m, BaseMessage) for m in messages):
        return list(messages)
    return None


def _last_human_message_id(inputs: object) -> str | None:
    """The id of the last HumanMessage of an agent's input (``{"messages": [...]}``, or a list of messages)."""
    messages = inputs if isinstance(inputs, (list, tuple)) else _state_messages_of(inputs)
    for message in reversed(messages or ()):
        if isinstance(message, HumanMessage):
            return message.id if isinstance(message.id, str) and message.id else None
    return None
