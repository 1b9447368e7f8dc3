"""The OpenAI Agents SDK adapter: record a run's tool calls and replay them into the next run.

Recording reads what the SDK keeps of a run (a ``RunResult``'s ``raw_responses`` and ``new_items``):
each model response that asked for function tools is a round, its calls in the response's order
with the outputs the model was sent; the calls that stopped the run for a person's approval; then
``RunCompleted`` with the tokens of every model call, or ``RunFailed``. A run that resumes a
``RunState`` after approvals records the answers and the approved calls' outputs, keyed by the
round and sequence of the run that asked.

Replay hands the service's ``openai-responses`` history to ``Runner.run`` as input items.

Install with ``pip install 'toolhistory-client[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import inspect
import json
import math
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

try:
    import pydantic_core
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
        StreamEvent,
        Tool,
        ToolApprovalItem,
        ToolCallOutputItem,
        TResponseInputItem,
    )
    from agents.items import MessageOutputItem, RunItem
    from agents.tool import default_tool_error_function
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "toolhistory.openai_agents needs the OpenAI Agents SDK (the `agents` package): "
        "pip install 'toolhistory-client[openai-agents]'"
    ) from missing

from toolhistory.events import JsonObject, JsonValue, RunFailure, TokenUsage, ToolCall, ToolResult
from toolhistory.limits import MAX_JSON_DEPTH, bounded_usage, json_depth, token_count
from toolhistory.publisher import cited_sources_from

if TYPE_CHECKING:
    from agents.run_config import ToolErrorFormatterArgs
    from agents.run_context import AgentHookContext

    from toolhistory.publisher import RunPublisher
    from toolhistory.replay import ReplayedTurn, ReplayHistory

__all__ = [
    "DEFAULT_TOOL_ERROR_TEXT",
    "STREAM_CANCELLED",
    "AgentsRunRecord",
    "AgentsRunRecorder",
    "ApprovalDecision",
    "ApprovalRequest",
    "RecordedRound",
    "RecordedStreamedRun",
    "ResumePoint",
    "ToolErrorTest",
    "agents_run_record",
    "describe_run_failure",
    "final_output_text",
    "history_input",
    "is_sdk_tool_error",
    "recorded_run",
    "recorded_run_streamed",
    "resume_point_of",
    "tool_error_function",
    "tool_result_of",
    "usage_of",
]

STREAM_CANCELLED = RunFailure(
    code="cancelled", message="the streamed run was cancelled before its events were exhausted"
)
"""The failure of a streamed run whose consumer stopped before its events ended."""

DEFAULT_TOOL_ERROR_TEXT: str = str(default_tool_error_function(RunContextWrapper(context=None), Exception()))
"""The text the SDK's default ``failure_error_function`` sends the model for a tool that raised."""

# The SDK's default texts for a tool that timed out and, with tool_not_found_behavior
# "return_error_to_model", for a call of a tool the agent does not have.
_DEFAULT_TIMEOUT_TEXT = re.compile(r"Tool '.*' timed out after \S+ seconds\.", re.DOTALL)
_DEFAULT_NOT_FOUND_TEXT = re.compile(r"Tool '.*' not found\.", re.DOTALL)

ToolErrorTest = Callable[[str, "str | None"], bool]
"""Tells whether a call's output is an error: ``(call_id, text the model was sent or None)``."""

# The call ids whose output tool_error_function (or the wrapped tool_error_formatter) produced,
# for the run being recorded: tool tasks copy the context, and share this set.
_error_marks: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar(
    "toolhistory_openai_agents_error_marks", default=None
)


# --------------------------------------------------------------------------------------------
# What a run records (pure mapping: SDK objects in, plain values out)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApprovalRequest:
    """A call that stopped the run for a person's approval."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's answer to a call the run resumed with."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    approved: bool
    reason: str | None = None
    """A rejection's message, when the host gave one (the text the SDK sent the model instead)."""


@dataclass(frozen=True)
class RecordedRound:
    """One model response that asked for function tools."""

    round_index: int
    calls: list[ToolCall]
    results: list[ToolResult] = field(default_factory=list)
    approval_requests: list[ApprovalRequest] = field(default_factory=list)


@dataclass(frozen=True)
class AgentsRunRecord:
    """Everything one run of the SDK has to record, in the order to publish it."""

    decisions: list[ApprovalDecision]
    """The answers to the calls that waited for approval when the run resumed."""
    resumed_results: list[ToolResult]
    """The outputs of those calls (an approved call's), keyed by the round and sequence of the run that asked."""
    rounds: list[RecordedRound]
    usage: list[TokenUsage]
    """The tokens of each model call of this run, in order."""
    awaiting_approval: bool
    """The run stopped for a person's approval."""
    ended_after_tools: bool
    """The run's last model response asked for tools: the run ended right after executing them."""
    final_message_id: str | None = None
    """The id the model gave the run's last assistant message, when it gave one."""
    last_response_id: str | None = None


@dataclass(frozen=True)
class _PendingApproval:
    tool_call_id: str
    tool_name: str


@dataclass(frozen=True)
class ResumePoint:
    """Where a resumed run starts in its ``RunState``.

    The responses and items there before belong to the run that stopped (it recorded them), and the
    calls waiting for approval then are the ones this run answers. Take it with ``resume_point_of``
    before ``Runner.run(agent, state)``: the SDK goes on in the same state.
    """

    responses: tuple[ModelResponse, ...]
    items: tuple[RunItem, ...]
    pending: tuple[_PendingApproval, ...]


@dataclass(frozen=True)
class _ObservedOutput:
    """A tool output the run hooks saw (for a failed run whose state lacks it)."""

    call_id: str
    returned: object


def resume_point_of(state: RunState[Any, Any]) -> ResumePoint:
    """The resume point of ``state``, taken before a run resumes it.

    Reads the state's model responses and generated items (the SDK has no public accessor for
    them) and its ``get_interruptions()``.
    """
    responses = getattr(state, "_model_responses", None)
    items = getattr(state, "_generated_items", None)
    if not isinstance(responses, list) or not isinstance(items, list):
        raise TypeError(
            "resume_point_of: this RunState has no _model_responses/_generated_items lists; "
            "the installed openai-agents version is not one this adapter supports (0.24)"
        )
    pending: list[_PendingApproval] = []
    for approval in state.get_interruptions():
        call = _function_call_of(approval.raw_item)
        if call is not None:
            pending.append(_PendingApproval(call[0], _approval_tool_name(approval, call[1])))
    return ResumePoint(tuple(responses), tuple(items), tuple(pending))


def agents_run_record(
    new_items: Sequence[RunItem],
    raw_responses: Sequence[ModelResponse],
    *,
    interruptions: Sequence[ToolApprovalItem] = (),
    context_wrapper: RunContextWrapper[Any] | None = None,
    resume_point: ResumePoint | None = None,
    is_tool_error: ToolErrorTest | None = None,
    model_of: Callable[[ModelResponse], str | None] | None = None,
    observed_outputs: Sequence[_ObservedOutput] = (),
) -> AgentsRunRecord:
    """What a run (``new_items`` and ``raw_responses`` of its result, or of an error's ``run_data``) records.

    Rounds are the model responses that asked for function tools, numbered over the whole state from
    0: a resumed run goes on with the numbering of the run it resumes, so a call's round and sequence
    are the same for every run that names it. A call's sequence is its place among the function calls
    of its response. Hosted tools (run by the provider) and computer, shell and apply_patch calls are
    not function calls and are not recorded. Only this run's part is returned when it resumed from
    ``resume_point``.
    """
    error_test = is_tool_error or is_sdk_tool_error
    start = len(resume_point.responses) if resume_point is not None else 0
    earlier_items = {id(item) for item in resume_point.items} if resume_point is not None else set()
    positions: dict[str, ToolCall] = {}
    rounds: list[RecordedRound] = []
    round_index = 0
    for at, response in enumerate(raw_responses):
        calls = [call for call in map(_function_call_of, response.output) if call is not None]
        if not calls:
            continue
        recorded = [
            ToolCall(
                round_index=round_index,
                sequence_index=sequence_index,
                tool_call_id=call_id,
                tool_name=name,
                arguments=parse_tool_arguments(arguments),
            )
            for sequence_index, (call_id, name, arguments) in enumerate(calls)
        ]
        # A later call with the same id wins: an output answers the latest call of its id.
        for call in recorded:
            positions[call.tool_call_id] = call
        if at >= start:
            rounds.append(RecordedRound(round_index=round_index, calls=recorded))
        round_index += 1
    own_round = {recorded.round_index: recorded for recorded in rounds}

    def approval_of(call: ToolCall) -> bool | None:
        return None if context_wrapper is None else context_wrapper.is_tool_approved(call.tool_name, call.tool_call_id)

    decisions: list[ApprovalDecision] = []
    denied: set[str] = set()
    for pending in resume_point.pending if resume_point is not None else ():
        position = positions.get(pending.tool_call_id)
        approved = (
            None
            if context_wrapper is None
            else context_wrapper.is_tool_approved(pending.tool_name, pending.tool_call_id)
        )
        if position is None or approved is None:
            continue
        reason = None
        if not approved:
            denied.add(pending.tool_call_id)
            assert context_wrapper is not None
            reason = context_wrapper.get_rejection_message(pending.tool_name, pending.tool_call_id)
        decisions.append(
            ApprovalDecision(
                round_index=position.round_index,
                sequence_index=position.sequence_index,
                tool_call_id=pending.tool_call_id,
                tool_name=position.tool_name,
                approved=approved,
                reason=reason,
            )
        )

    outputs: list[tuple[str, str | None, JsonValue]] = []
    seen_outputs: set[str] = set()
    for item in new_items:
        if id(item) in earlier_items or not isinstance(item, ToolCallOutputItem):
            continue
        call_id = _function_output_call_id(item.raw_item)
        if call_id is None:
            continue
        seen_outputs.add(call_id)
        outputs.append((call_id, _output_text(item.raw_item), tool_result_of(item)))
    for observed in observed_outputs:
        if observed.call_id in seen_outputs:
            continue
        seen_outputs.add(observed.call_id)
        observed_text = observed.returned if isinstance(observed.returned, str) else str(observed.returned)
        outputs.append((observed.call_id, observed_text, _result_value(observed.returned, observed_text)))

    resumed_results: list[ToolResult] = []
    for call_id, text, value in outputs:
        position = positions.get(call_id)
        # A denied call did not run: its decision says so, and the text the SDK sent instead is no result of the tool.
        if position is None or call_id in denied:
            continue
        result = ToolResult(
            round_index=position.round_index,
            sequence_index=position.sequence_index,
            tool_call_id=call_id,
            result=value,
            # A call the SDK refused by a standing rejection (always_reject) did not run either.
            is_error=error_test(call_id, text) or approval_of(position) is False,
            tool_name=position.tool_name,
        )
        own = own_round.get(position.round_index)
        if own is None:
            resumed_results.append(result)
        else:
            own.results.append(result)

    already_pending = {pending.tool_call_id for pending in resume_point.pending} if resume_point is not None else set()
    for approval in interruptions:
        asked = _function_call_of(approval.raw_item)
        position = positions.get(asked[0]) if asked is not None else None
        if position is None or position.tool_call_id in already_pending:
            continue
        own = own_round.get(position.round_index)
        if own is not None:
            own.approval_requests.append(
                ApprovalRequest(
                    position.round_index, position.sequence_index, position.tool_call_id, position.tool_name
                )
            )

    own_responses = list(raw_responses[start:])
    last = own_responses[-1] if own_responses else None
    message_ids = [
        item.raw_item.id
        for item in new_items
        if id(item) not in earlier_items and isinstance(item, MessageOutputItem) and item.raw_item.id
    ]
    return AgentsRunRecord(
        decisions=decisions,
        resumed_results=resumed_results,
        rounds=rounds,
        usage=[usage_of(response, model_of(response) if model_of is not None else None) for response in own_responses],
        awaiting_approval=len(interruptions) > 0,
        ended_after_tools=last is not None and any(_function_call_of(item) is not None for item in last.output),
        final_message_id=message_ids[-1] if message_ids else None,
        last_response_id=last.response_id if last is not None and last.response_id else None,
    )


def usage_of(response: ModelResponse, model: str | None = None) -> TokenUsage:
    """One model call's tokens (``ModelResponse`` carries no model name: give it as ``model``)."""
    return TokenUsage(
        input_tokens=token_count(response.usage.input_tokens),
        output_tokens=token_count(response.usage.output_tokens),
        model=model or None,
    )


def tool_result_of(output: ToolCallOutputItem) -> JsonValue:
    """The result to record for a call's output.

    What the tool returned when it is JSON (a dict, list or number) the SDK sent the model as its
    ``str()`` (so the policy's JSON paths apply); else the text the model was sent; an output that is
    not text (an image, a file, several parts) as its JSON text.
    """
    text = _output_text(output.raw_item)
    if text is None:
        sent = output.raw_item.get("output") if isinstance(output.raw_item, Mapping) else None
        return json.dumps(_plain(sent), ensure_ascii=False)
    return _result_value(output.output, text)


def is_sdk_tool_error(call_id: str, text: str | None) -> bool:
    """The default error test: an output ``tool_error_function`` marked, or one of the SDK's default
    texts for a tool that raised, timed out, or does not exist."""
    marks = _error_marks.get()
    if marks is not None and call_id in marks:
        return True
    return text is not None and (
        text == DEFAULT_TOOL_ERROR_TEXT
        or _DEFAULT_TIMEOUT_TEXT.fullmatch(text) is not None
        or _DEFAULT_NOT_FOUND_TEXT.fullmatch(text) is not None
    )


def tool_error_function(
    format: Callable[[RunContextWrapper[Any], Exception], str | Awaitable[str]] | None = None,
) -> Callable[[RunContextWrapper[Any], Exception], Awaitable[str]]:
    """A ``failure_error_function`` (or ``timeout_error_function``) for ``@function_tool`` whose
    outputs the recorder records as errors, whatever text they send the model.

    The model is sent the SDK's default error text, or what ``format(ctx, error)`` makes of the error.
    Without it, only the SDK's default texts are told apart from a tool's own result.
    """

    async def on_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
        call_id = getattr(ctx, "tool_call_id", None)
        marks = _error_marks.get()
        if marks is not None and isinstance(call_id, str):
            marks.add(call_id)
        if format is None:
            return DEFAULT_TOOL_ERROR_TEXT
        text = format(ctx, error)
        return await text if inspect.isawaitable(text) else text

    return on_error


def parse_tool_arguments(text: str) -> JsonObject:
    """A call's arguments parsed; text that is not a JSON object is kept as ``{"_raw": text}``."""
    if text.strip() == "":
        return {}
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, dict) and json_depth(parsed) <= MAX_JSON_DEPTH:
        return cast("JsonObject", parsed)
    return {"_raw": text}


def final_output_text(final_output: object) -> str | None:
    """The text of a run's ``final_output``: a text output as it is, a structured one (a Pydantic model, a
    dataclass, ...) as its JSON text; ``None`` for none."""
    if final_output is None:
        return None
    if isinstance(final_output, str):
        return final_output
    return pydantic_core.to_json(final_output, fallback=str).decode()


def describe_run_failure(error: BaseException) -> RunFailure:
    """The ``RunFailed`` error for what a run raised: its class name and message."""
    message = str(error) or type(error).__name__
    return RunFailure(code=type(error).__name__[:256], message=message)


# --------------------------------------------------------------------------------------------
# Replay
# --------------------------------------------------------------------------------------------


def history_input(
    history: ReplayHistory | Sequence[ReplayedTurn] | Sequence[Mapping[str, Any]],
) -> list[TResponseInputItem]:
    """The replayed calls and outputs as ``Runner.run`` input items, every turn in order.

    ``history`` is a ``ReplayHistory`` fetched with ``format="openai-responses"``, its turns, or the
    items of one turn. Each ``function_call`` item (``call_id``, ``name``, ``arguments``; no item
    ``id``) and ``function_call_output`` item (an error's text starts with ``[error] ``) is what the
    SDK and the Responses API take as input. Anything else is refused: ask for the
    ``openai-responses`` format. Append the new user message after it
    (``history_input(h) + [{"role": "user", "content": "..."}]``); to place each turn among your own
    items, use ``toolhistory.splice.splice_history``.
    """
    items: list[TResponseInputItem] = []
    for at, item in enumerate(_replayed_items(history)):
        if not isinstance(item, Mapping):
            raise TypeError(f"replayed item {at} is not an OpenAI Responses item ({item!r:.120}): {_FORMAT_HINT}")
        kind = item.get("type")
        if kind == "function_call" and all(isinstance(item.get(key), str) for key in ("call_id", "name", "arguments")):
            items.append(
                cast(
                    "TResponseInputItem",
                    {
                        "type": "function_call",
                        "call_id": item["call_id"],
                        "name": item["name"],
                        "arguments": item["arguments"],
                    },
                )
            )
        elif kind == "function_call_output" and all(isinstance(item.get(key), str) for key in ("call_id", "output")):
            items.append(
                cast(
                    "TResponseInputItem",
                    {"type": "function_call_output", "call_id": item["call_id"], "output": item["output"]},
                )
            )
        else:
            shown = json.dumps(_plain(item), ensure_ascii=False)[:120]
            raise TypeError(
                f"replayed item {at} is not an OpenAI Responses function_call or function_call_output item "
                f"({shown}): {_FORMAT_HINT}"
            )
    return items


_FORMAT_HINT = 'replay the history with format="openai-responses"'


def _replayed_items(history: object) -> list[object]:
    turns = getattr(history, "turns", None)
    if turns is not None:
        format = getattr(history, "format", None)
        if isinstance(format, str) and format != "openai-responses":
            raise ValueError(
                f"history_input takes a history in the openai-responses format, not {format!r}: {_FORMAT_HINT}"
            )
        return [message for turn in turns for message in turn.messages]
    if isinstance(history, Sequence) and not isinstance(history, (str, bytes)):
        if all(hasattr(entry, "messages") for entry in history):
            return [message for turn in history for message in turn.messages]
        return list(history)
    raise TypeError(f"history_input takes a ReplayHistory, its turns or replayed items, not {type(history).__name__}")


# --------------------------------------------------------------------------------------------
# Recording (thin: publishes what agents_run_record maps)
# --------------------------------------------------------------------------------------------


class _RecordingHooks(RunHooks[Any]):
    """Sees each model response and tool output as the run goes (for a failed run's record), and
    passes every callback on to the host's own hooks."""

    def __init__(self, host: RunHooks[Any] | None, model_name: Callable[[Agent[Any]], str | None]) -> None:
        self.host = host
        self.model_name = model_name
        self.responses: list[ModelResponse] = []
        self.models: dict[int, str | None] = {}
        self.outputs: list[_ObservedOutput] = []

    async def on_llm_start(
        self,
        context: RunContextWrapper[Any],
        agent: Agent[Any],
        system_prompt: str | None,
        input_items: list[TResponseInputItem],
    ) -> None:
        if self.host is not None:
            await self.host.on_llm_start(context, agent, system_prompt, input_items)

    async def on_llm_end(self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse) -> None:
        self.responses.append(response)
        self.models[id(response)] = self.model_name(agent)
        if self.host is not None:
            await self.host.on_llm_end(context, agent, response)

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        if self.host is not None:
            await self.host.on_agent_start(context, agent)

    async def on_agent_end(self, context: AgentHookContext[Any], agent: Agent[Any], output: Any) -> None:
        if self.host is not None:
            await self.host.on_agent_end(context, agent, output)

    async def on_handoff(self, context: RunContextWrapper[Any], from_agent: Agent[Any], to_agent: Agent[Any]) -> None:
        if self.host is not None:
            await self.host.on_handoff(context, from_agent, to_agent)

    async def on_tool_start(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool) -> None:
        if self.host is not None:
            await self.host.on_tool_start(context, agent, tool)

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object) -> None:
        call_id = getattr(context, "tool_call_id", None)
        if isinstance(call_id, str):
            self.outputs.append(_ObservedOutput(call_id, result))
        if self.host is not None:
            await self.host.on_tool_end(context, agent, tool, result)


class AgentsRunRecorder:
    """Records one run of the OpenAI Agents SDK through ``run`` (a ``RunPublisher``).

    Use ``recorded_run`` / ``recorded_run_streamed``, or drive it yourself: pass ``hooks()`` and
    ``run_config()`` to ``Runner.run``, call ``resuming(state)`` before resuming a ``RunState``, then
    ``complete(result)`` or ``fail(error)``. One recorder per run; a run that resumes a state is a new
    run (its own run id). Publishing blocks, so it runs in a worker thread.
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
        cited_sources_from_answer: bool = False,
    ) -> None:
        """``assistant_message_id``: the host's id of the run's final answer (the replayed tool segment
        goes right before it). ``finish_reason``: default ``stop``, or ``awaiting_approval`` when the run
        stopped for approvals, ``tool_limit`` when it ended right after executing tools. ``model``: the
        model name recorded with each call's tokens (default: the agent's model, when it names one).
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
        self.cited_sources_from_answer = cited_sources_from_answer
        self.error_marks: set[str] = set()
        self._resume_point: ResumePoint | None = None
        self._hooks: _RecordingHooks | None = None
        self._run_config: RunConfig | None = None
        self._ended = False

    def hooks(self, host_hooks: RunHooks[Any] | None = None) -> RunHooks[Any]:
        """The hooks to give ``Runner.run``: they see the run's steps, and call ``host_hooks`` too."""
        self._hooks = _RecordingHooks(host_hooks, self._model_name)
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
                marks = _error_marks.get()
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
        token = _error_marks.set(self.error_marks)
        try:
            return agents_run_record(
                new_items,
                raw_responses,
                interruptions=interruptions,
                context_wrapper=context_wrapper,
                resume_point=self._resume_point,
                is_tool_error=self.is_tool_error,
                model_of=self._model_of_response,
                observed_outputs=hooks.outputs if hooks is not None else (),
            )
        finally:
            _error_marks.reset(token)

    async def complete(self, result: RunResult | RunResultStreaming) -> None:
        """Records the run's rounds and ``RunCompleted`` from its result (a streamed result once its
        events are exhausted). Once the run has ended, does nothing."""
        if self._ended:
            return
        self._ended = True
        record = self.record_of(
            result.new_items,
            result.raw_responses,
            interruptions=result.interruptions,
            context_wrapper=result.context_wrapper,
        )
        answered = not record.awaiting_approval and not record.ended_after_tools
        answer = final_output_text(result.final_output) if self.cited_sources_from_answer and answered else None
        await asyncio.to_thread(self._publish_completion, record, answer)

    async def fail(
        self, error: BaseException | RunFailure, run: RunErrorDetails | RunResultStreaming | None = None
    ) -> None:
        """Records ``RunFailed`` for what the run raised (or the given ``RunFailure``), with the rounds
        it got through and the tokens spent: from ``run`` (default: the ``run_data`` an SDK error
        carries), else from what the recorder's hooks saw. Once the run has ended, does nothing."""
        if self._ended:
            return
        self._ended = True
        view = run if run is not None else getattr(error, "run_data", None)
        if isinstance(view, (RunErrorDetails, RunResultStreaming)):
            record: AgentsRunRecord | None = self.record_of(
                view.new_items, view.raw_responses, context_wrapper=view.context_wrapper
            )
        elif self._hooks is not None:
            earlier = self._resume_point
            record = self.record_of(
                list(earlier.items) if earlier is not None else [],
                [*(earlier.responses if earlier is not None else ()), *self._hooks.responses],
            )
        else:
            record = None
        failure = error if isinstance(error, RunFailure) else describe_run_failure(error)
        await asyncio.to_thread(self._publish_failure, record, failure)

    async def run_agent(self, agent: Agent[Any], input: Any, **runner_kwargs: Any) -> RunResult:
        """``Runner.run(agent, input, **runner_kwargs)``, recorded; see ``recorded_run``."""
        if isinstance(input, RunState):
            self.resuming(input)
        runner_kwargs["hooks"] = self.hooks(runner_kwargs.get("hooks"))
        runner_kwargs["run_config"] = self.run_config(runner_kwargs.get("run_config"))
        token = _error_marks.set(self.error_marks)
        try:
            result = await Runner.run(agent, input, **runner_kwargs)
        except (Exception, asyncio.CancelledError) as error:
            await _publish_quietly(self.fail(error))
            raise
        finally:
            _error_marks.reset(token)
        await self.complete(result)
        return result

    def _publish_completion(self, record: AgentsRunRecord, answer: str | None = None) -> None:
        self._publish_steps(record)
        if self.finish_reason is not None:
            finish_reason = self.finish_reason
        elif record.awaiting_approval:
            finish_reason = "awaiting_approval"
        elif record.ended_after_tools:
            finish_reason = "tool_limit"
        else:
            finish_reason = "stop"
        self.run.complete(
            assistant_message_id=self.assistant_message_id,
            finish_reason=finish_reason,
            usage=bounded_usage(record.usage) or None,
            cited_sources=None if answer is None else cited_sources_from(answer),
        )

    def _publish_failure(self, record: AgentsRunRecord | None, failure: RunFailure) -> None:
        if record is not None:
            self._publish_steps(record)
        self.run.fail(error=failure, usage=(bounded_usage(record.usage) or None) if record is not None else None)

    def _publish_steps(self, record: AgentsRunRecord) -> None:
        """The answers and resumed outputs first, then each round: its calls, their outputs, its approval requests."""
        for decision in record.decisions:
            self.run.approval_decided(
                round_index=decision.round_index,
                sequence_index=decision.sequence_index,
                tool_call_id=decision.tool_call_id,
                approved=decision.approved,
                reason=decision.reason,
                decided_by=self.decided_by,
            )
        if record.resumed_results:
            self.run.tool_results(record.resumed_results)
        for recorded in record.rounds:
            self.run.tool_calls(recorded.calls)
            if recorded.results:
                self.run.tool_results(recorded.results)
            for request in recorded.approval_requests:
                self.run.approval_requested(
                    round_index=request.round_index,
                    sequence_index=request.sequence_index,
                    tool_call_id=request.tool_call_id,
                    reason=self.approval_reason(request) if self.approval_reason is not None else None,
                )

    def _model_of_response(self, response: ModelResponse) -> str | None:
        if self.model is not None:
            return self.model
        return self._hooks.models.get(id(response)) if self._hooks is not None else None

    def _model_name(self, agent: Agent[Any]) -> str | None:
        configured = self._run_config.model if self._run_config is not None else None
        for model in (configured, agent.model):
            if isinstance(model, str) and model:
                return model
            name = getattr(model, "model", None)
            if isinstance(name, str) and name:
                return name
        return None


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
    cited_sources_from_answer: bool = False,
    **runner_kwargs: Any,
) -> RunResult:
    """Runs ``Runner.run(agent, input, **runner_kwargs)`` and records it as one run of ``run_publisher``.

    A ``RunState`` input resumes a run that stopped for approvals: the answers given with
    ``state.approve``/``state.reject`` are recorded (``ToolApprovalDecided``), then the run goes on.
    When the run raises, ``RunFailed`` is recorded with the rounds it got through and the error
    re-raised (a publishing error then is not raised over it). Your own ``hooks`` and ``run_config``
    still apply. ``cited_sources_from_answer``: see ``AgentsRunRecorder``.
    """
    recorder = AgentsRunRecorder(
        run_publisher,
        assistant_message_id=assistant_message_id,
        finish_reason=finish_reason,
        decided_by=decided_by,
        approval_reason=approval_reason,
        is_tool_error=is_tool_error,
        model=model,
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
        token = _error_marks.set(self.recorder.error_marks)
        try:
            async for event in self.result.stream_events():
                yield event
        except Exception as error:
            await _publish_quietly(self.recorder.fail(error, self.result))
            raise
        except BaseException:
            # GeneratorExit (the consumer stopped) or cancellation: the run does not go on.
            self.result.cancel()
            await _publish_quietly(self.recorder.fail(STREAM_CANCELLED, self.result))
            raise
        finally:
            _error_marks.reset(token)
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
        cited_sources_from_answer=cited_sources_from_answer,
    )
    if isinstance(input, RunState):
        recorder.resuming(input)
    runner_kwargs["hooks"] = recorder.hooks(runner_kwargs.get("hooks"))
    runner_kwargs["run_config"] = recorder.run_config(runner_kwargs.get("run_config"))
    # The run's task copies the context now: its tools mark errors in this recorder's set.
    token = _error_marks.set(recorder.error_marks)
    try:
        result = Runner.run_streamed(agent, input, **runner_kwargs)
    finally:
        _error_marks.reset(token)
    return RecordedStreamedRun(recorder, result)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


async def _publish_quietly(publishing: Awaitable[None]) -> None:
    """Publishes a failure without hiding the run's own error behind a publishing one."""
    with contextlib.suppress(Exception):
        await publishing


def _field(item: object, name: str) -> object:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _function_call_of(item: object) -> tuple[str, str, str] | None:
    """``(call_id, name, arguments)`` of a function call output item."""
    if _field(item, "type") != "function_call":
        return None
    call_id, name, arguments = _field(item, "call_id"), _field(item, "name"), _field(item, "arguments")
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    return call_id, name, arguments if isinstance(arguments, str) else ""


def _function_output_call_id(raw: object) -> str | None:
    if _field(raw, "type") != "function_call_output":
        return None
    call_id = _field(raw, "call_id")
    return call_id if isinstance(call_id, str) else None


def _approval_tool_name(approval: ToolApprovalItem, call_name: str) -> str:
    """The name the SDK keys the call's approval by."""
    return approval.tool_name if isinstance(approval.tool_name, str) and approval.tool_name else call_name


def _output_text(raw: object) -> str | None:
    """The text the model was sent for an output, when it was text."""
    sent = _field(raw, "output")
    if isinstance(sent, str):
        return sent
    parts = sent if isinstance(sent, list) else [sent]
    if len(parts) == 1 and _field(parts[0], "type") in ("input_text", "text"):
        text = _field(parts[0], "text")
        return text if isinstance(text, str) else None
    return None


def _result_value(returned: object, text: str) -> JsonValue:
    if isinstance(returned, bool) or returned is None:
        return text
    if not isinstance(returned, (dict, list, int, float)) or not _is_json(returned):
        return text
    # Sent as str() (a plain function tool) or as JSON (one with an output schema).
    if str(returned) == text or _json_or_none(text) == returned:
        return cast("JsonValue", returned)
    return text


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _is_json(value: object, depth: int = 0) -> bool:
    if depth > MAX_JSON_DEPTH:
        return False
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(entry, depth + 1) for entry in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_json(entry, depth + 1) for key, entry in value.items())
    return False


def _plain(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
