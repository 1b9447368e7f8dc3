"""PydanticAI adapter: record an agent run's tool calls, and replay them as ``message_history``.

Recording reads what PydanticAI keeps of a run (``result.new_messages()``): each ``ModelResponse``
with function tool calls is a round, each ``ToolReturnPart`` the result of its call (``outcome``
``'failed'`` or ``'retried'``, i.e. the tool raised ``ToolFailed`` or ``ModelRetry`` or its arguments
failed validation, is an error result), one usage entry per model response, then ``RunCompleted``.
Calls waiting for approval (``DeferredToolRequests``) are ``ToolApprovalRequested``; the run that
resumes with ``DeferredToolResults`` records the decisions and the approved calls' results with the
keys of the run that asked. ``recorded_run`` runs the agent and records it, ``RunFailed`` included.

Replay turns a ``ReplayHistory`` fetched with ``format="bedrock-converse"`` into ``ModelMessage``
objects (``to_message_history``), or splices it into the host's own messages
(``splice_message_history``). That format keeps a JSON result as JSON (so PydanticAI serialises it
to the same text the model saw), flags errors (``status: "error"``, replayed as ``outcome='failed'``,
which every PydanticAI model sends through its provider's error channel) and gives ids every
provider accepts.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

try:
    import pydantic_core
    from pydantic_ai import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
    from pydantic_ai.messages import (
        ERROR_OUTCOMES,
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        RetryPromptPart,
        ToolCallPart,
        ToolReturnPart,
        tool_return_ta,
    )
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "toolhistory.pydantic_ai needs PydanticAI: pip install 'toolhistory-client[pydantic-ai]'"
    ) from error

from toolhistory.events import RunFailure, TokenUsage, ToolCall, ToolResult
from toolhistory.limits import MAX_ID_LENGTH, MAX_JSON_DEPTH, bounded_usage, json_depth, token_count
from toolhistory.publisher import cited_sources_from
from toolhistory.splice import splice_history

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from pydantic_ai.agent import AbstractAgent
    from pydantic_ai.run import AgentRunResult

    from toolhistory.events import JsonObject, JsonValue
    from toolhistory.publisher import RunPublisher
    from toolhistory.replay import ReplayedTurn, ReplayHistory

__all__ = [
    "REPLAY_FORMAT",
    "RecordedCall",
    "RecordedDecision",
    "RecordedResult",
    "RecordedRound",
    "RecordedUsage",
    "RunRecord",
    "answer_text_of",
    "arguments_of",
    "from_replay_messages",
    "is_default_output_tool",
    "publish_run_failure",
    "publish_run_record",
    "publish_run_steps",
    "record_failure",
    "record_messages",
    "recorded_run",
    "result_of",
    "run_failure_of",
    "run_record",
    "splice_message_history",
    "to_message_history",
]

_log = logging.getLogger(__name__)

REPLAY_FORMAT = "bedrock-converse"
"""The history format ``to_message_history`` reads: ask ``get_replay_history(..., format=REPLAY_FORMAT)``."""

_DEFAULT_OUTPUT_TOOL_NAME = "final_result"


def is_default_output_tool(tool_name: str) -> bool:
    """Whether a call is to one of PydanticAI's default output tools (``final_result``, ``final_result_<Type>``).

    An output tool call is the run's answer, not tool use: it is not recorded.
    """
    return tool_name == _DEFAULT_OUTPUT_TOOL_NAME or tool_name.startswith(f"{_DEFAULT_OUTPUT_TOOL_NAME}_")


# --- What a run has to record (pure) -----------------------------------------------------------


@dataclass(frozen=True)
class RecordedCall:
    """A function tool call as recorded: its place in the model response that made it."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    arguments: JsonObject


@dataclass(frozen=True)
class RecordedResult:
    """A call's result, as the model was sent it."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    result: JsonValue
    is_error: bool


@dataclass(frozen=True)
class RecordedDecision:
    """A person's answer to a call that waited for approval in an earlier run."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    approved: bool
    reason: str | None = None


@dataclass(frozen=True)
class RecordedRound:
    """One model response that asked for function tools."""

    round_index: int
    calls: tuple[RecordedCall, ...]
    results: tuple[RecordedResult, ...] = ()
    approval_requests: tuple[RecordedCall, ...] = ()


RecordedUsage = TokenUsage
"""One model call's tokens: the publisher's own `TokenUsage`."""


@dataclass(frozen=True)
class RunRecord:
    """Everything one PydanticAI run has to record, in the order to publish it."""

    decisions: tuple[RecordedDecision, ...] = ()
    """Answers to calls of an earlier run that waited for approval."""
    resumed_results: tuple[RecordedResult, ...] = ()
    """Results of calls of an earlier run (approved or executed externally), with that run's keys."""
    rounds: tuple[RecordedRound, ...] = ()
    usage: tuple[RecordedUsage, ...] = ()
    """One entry per model response of this run, in order (at most 1,000: the rest folded into the last)."""
    awaiting: bool = False
    """The run stopped with calls waiting for approval or an external result."""
    ended_after_tools: bool = False
    """The run's last model response asked for tools: the model never saw their results in this run."""
    last_response_id: str | None = None
    """The provider's id of the run's last model response, when it gave one."""

    @property
    def finish_reason(self) -> str:
        """``stop`` when the model answered after the last round's results, else ``tool_limit``."""
        return "tool_limit" if self.awaiting or self.ended_after_tools else "stop"


@dataclass
class _Position:
    call: RecordedCall
    answered: bool = False


@dataclass
class _Tracker:
    """Calls by position, to pair each return with its call (ids may be empty or repeated)."""

    responses: list[list[_Position]] = field(default_factory=list)

    def add(self, calls: Sequence[RecordedCall]) -> None:
        self.responses.append([_Position(call) for call in calls])

    def answer(self, tool_call_id: str, tool_name: str) -> RecordedCall | None:
        """The call a return answers: the latest response's first open call of that id (and name, if one has it)."""
        for positions in reversed(self.responses):
            candidates = [p for p in positions if not p.answered and p.call.tool_call_id == tool_call_id]
            if not candidates:
                continue
            chosen = next((p for p in candidates if p.call.tool_name == tool_name), candidates[0])
            chosen.answered = True
            return chosen.call
        return None

    def find(self, tool_call_id: str) -> RecordedCall | None:
        """The latest call of that id, answered or not."""
        for positions in reversed(self.responses):
            for position in positions:
                if position.call.tool_call_id == tool_call_id:
                    return position.call
        return None


def run_record(
    messages: Sequence[ModelMessage],
    *,
    history: Sequence[ModelMessage] = (),
    deferred_requests: DeferredToolRequests | None = None,
    deferred_results: DeferredToolResults | None = None,
    is_output_tool: Callable[[str], bool] = is_default_output_tool,
) -> RunRecord:
    """What one run has to record, from its messages (``result.new_messages()``).

    Rounds are this run's model responses with function tool calls (output tool calls and native tools
    left out), numbered from 0; a call's sequence is its place among the recorded calls of its response.
    ``history`` is what the run was given as ``message_history``: a run that resumes with
    ``deferred_results`` answers calls made there (only those: a return of any other earlier call is not
    this run's), and their decisions and results are recorded with the round and sequence the calls had
    in the run that made them (its messages share a ``run_id``; without one, a run starts at a request
    with a user prompt). ``deferred_requests`` is the run's output when it stopped for approvals.
    """
    earlier = _Tracker()
    for run_messages in _runs_of(history):
        for calls in _rounds_of(run_messages, is_output_tool):
            earlier.add(calls)

    decided: dict[str, RecordedDecision] = {}
    for tool_call_id, answer in (deferred_results.approvals if deferred_results else {}).items():
        call = earlier.find(tool_call_id)
        if call is None:
            continue
        approved = answer is True or isinstance(answer, ToolApproved)
        reason = None
        if not approved:
            reason = answer.message if isinstance(answer, ToolDenied) else ToolDenied().message
        decided[tool_call_id] = RecordedDecision(
            call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, approved, reason
        )

    answered_ids = set(deferred_results.approvals) | set(deferred_results.calls) if deferred_results else set()
    own = _Tracker()
    rounds: list[RecordedRound] = []
    results_by_round: dict[int, list[RecordedResult]] = {}
    resumed: list[RecordedResult] = []
    usage: list[RecordedUsage] = []
    last_response: ModelResponse | None = None
    for message in messages:
        if isinstance(message, ModelResponse):
            last_response = message
            usage.append(_usage_of(message))
            calls = _calls_of(message, len(rounds), is_output_tool)
            if calls:
                own.add(calls)
                rounds.append(RecordedRound(len(rounds), tuple(calls)))
            continue
        for part in message.parts:
            answered = _returned(part)
            if answered is None:
                continue
            tool_call_id, tool_name = answered
            call = own.answer(tool_call_id, tool_name)
            if call is not None:
                result = _result_of(part, call, own_run=True)
                if result is not None:
                    results_by_round.setdefault(call.round_index, []).append(result)
                continue
            if tool_call_id not in answered_ids:
                # Not a call this run was given an answer for: an orphan, or the history's own.
                continue
            call = earlier.answer(tool_call_id, tool_name)
            if call is None or (tool_call_id in decided and not decided[tool_call_id].approved):
                # A denied call did not run: its decision says so.
                continue
            result = _result_of(part, call, own_run=False)
            if result is not None:
                resumed.append(result)

    waiting_ids = {c.tool_call_id for c in deferred_requests.approvals} if deferred_requests else set()
    finished: list[RecordedRound] = []
    for round_ in rounds:
        requests = tuple(c for c in round_.calls if c.tool_call_id in waiting_ids and c.tool_call_id != "")
        finished.append(
            RecordedRound(
                round_.round_index, round_.calls, tuple(results_by_round.get(round_.round_index, ())), requests
            )
        )

    return RunRecord(
        decisions=tuple(decided.values()),
        resumed_results=tuple(resumed),
        rounds=tuple(finished),
        usage=tuple(bounded_usage(usage)),
        awaiting=deferred_requests is not None and bool(deferred_requests.approvals or deferred_requests.calls),
        ended_after_tools=last_response is not None and bool(_calls_of(last_response, 0, is_output_tool)),
        last_response_id=last_response.provider_response_id if last_response is not None else None,
    )


def _runs_of(history: Sequence[ModelMessage]) -> list[list[ModelMessage]]:
    """The history split into runs: by ``run_id``, else a run starts at a request with a user prompt."""
    runs: list[list[ModelMessage]] = []
    current_id: str | None = None
    for message in history:
        if message.run_id is not None:
            starts_run = message.run_id != current_id
        else:
            starts_run = current_id is not None or (
                isinstance(message, ModelRequest) and any(p.part_kind == "user-prompt" for p in message.parts)
            )
        if starts_run or not runs:
            runs.append([])
        runs[-1].append(message)
        current_id = message.run_id
    return runs


def _rounds_of(messages: Sequence[ModelMessage], is_output_tool: Callable[[str], bool]) -> list[list[RecordedCall]]:
    rounds: list[list[RecordedCall]] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            calls = _calls_of(message, len(rounds), is_output_tool)
            if calls:
                rounds.append(calls)
    return rounds


def _calls_of(response: ModelResponse, round_index: int, is_output_tool: Callable[[str], bool]) -> list[RecordedCall]:
    parts = [p for p in response.parts if isinstance(p, ToolCallPart) and not is_output_tool(p.tool_name)]
    return [
        RecordedCall(round_index, sequence, part.tool_call_id, part.tool_name, arguments_of(part))
        for sequence, part in enumerate(parts)
    ]


def arguments_of(part: ToolCallPart) -> JsonObject:
    """A call's arguments as a JSON object; text that is not one (or nests too deep) as ``{"_raw": text}``."""
    args = part.args
    if args is None or args == "" or (isinstance(args, str) and args.strip() == ""):
        return {}
    if isinstance(args, str):
        try:
            parsed = pydantic_core.from_json(args)
        except ValueError:
            return {"_raw": args}
        if isinstance(parsed, dict) and json_depth(parsed) <= MAX_JSON_DEPTH:
            return cast("JsonObject", parsed)
        return {"_raw": args}
    value = tool_return_ta.dump_python(args, mode="json", by_alias=True)
    if isinstance(value, dict) and json_depth(value) <= MAX_JSON_DEPTH:
        return cast("JsonObject", value)
    return {"_raw": tool_return_ta.dump_json(args, by_alias=True).decode()}


def _returned(part: ModelRequestPart) -> tuple[str, str] | None:
    """The (id, tool name) a request part answers, if it is a function tool's return."""
    if isinstance(part, ToolReturnPart):
        return part.tool_call_id, part.tool_name
    if isinstance(part, RetryPromptPart) and part.tool_name is not None:
        return part.tool_call_id, part.tool_name
    return None


def _result_of(part: ModelRequestPart, call: RecordedCall, *, own_run: bool) -> RecordedResult | None:
    """The result to record for a return, or None when the call produced none (interrupted, denied on resume)."""
    if isinstance(part, RetryPromptPart):
        text = part.content if isinstance(part.content, str) else part.model_response()
        return RecordedResult(call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, text, True)
    assert isinstance(part, ToolReturnPart)
    if part.outcome == "interrupted" or (part.outcome == "denied" and not own_run):
        return None
    is_error = part.outcome in ERROR_OUTCOMES or part.outcome == "denied"
    return RecordedResult(
        call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, result_of(part), is_error
    )


def result_of(part: ToolReturnPart) -> JsonValue:
    """A return's content as recorded: what the tool returned as JSON, so PydanticAI sends the same text on replay.

    A string stays a string (sent as it is); ``None`` is ``""`` (what the model is sent); any other value its
    JSON form; an error's text, unwrapped (replay marks it an error again); content with files the text the
    model was sent, which names the files (their bytes are not recorded).
    """
    if part.outcome != "success" or part.files:
        return part.model_response_str_and_user_content(wrap_if_error=False)[0]
    content = part.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return cast("JsonValue", tool_return_ta.dump_python(content, mode="json", by_alias=True))


def _usage_of(response: ModelResponse) -> RecordedUsage:
    model = response.model_name[:MAX_ID_LENGTH] if response.model_name else None
    return RecordedUsage(token_count(response.usage.input_tokens), token_count(response.usage.output_tokens), model)


def answer_text_of(output: object) -> str | None:
    """The text of a run's answer (``result.output``): a text output as it is, a structured one as its JSON text;
    ``None`` for no answer (``None``, or calls waiting in a ``DeferredToolRequests``)."""
    if output is None or isinstance(output, DeferredToolRequests):
        return None
    if isinstance(output, str):
        return output
    return tool_return_ta.dump_json(output).decode()


def run_failure_of(error: BaseException) -> tuple[str, str]:
    """The (code, message) to record for what a run raised: its class name and its text."""
    if isinstance(error, asyncio.CancelledError):
        return "aborted", str(error) or "the run was cancelled before it completed"
    return type(error).__name__[:MAX_ID_LENGTH], str(error) or type(error).__name__


# --- Publishing (blocking: from async code, call through asyncio.to_thread) --------------------


def publish_run_steps(
    run: RunPublisher,
    record: RunRecord,
    *,
    decided_by: str | None = None,
    approval_reason: Callable[[RecordedCall], str | None] | None = None,
) -> None:
    """Publishes the decisions and resumed results, then each round: its calls, results and approval requests."""

    for decision in record.decisions:
        run.approval_decided(
            round_index=decision.round_index,
            sequence_index=decision.sequence_index,
            tool_call_id=decision.tool_call_id,
            approved=decision.approved,
            reason=decision.reason,
            decided_by=decided_by,
        )

    def results(items: Iterable[RecordedResult]) -> list[ToolResult]:
        return [
            ToolResult(
                round_index=r.round_index,
                sequence_index=r.sequence_index,
                tool_call_id=r.tool_call_id,
                result=r.result,
                is_error=r.is_error,
                tool_name=r.tool_name,
            )
            for r in items
        ]

    if record.resumed_results:
        run.tool_results(results(record.resumed_results))
    for round_ in record.rounds:
        run.tool_calls(
            [
                ToolCall(
                    round_index=c.round_index,
                    sequence_index=c.sequence_index,
                    tool_call_id=c.tool_call_id,
                    tool_name=c.tool_name,
                    arguments=c.arguments,
                )
                for c in round_.calls
            ]
        )
        if round_.results:
            run.tool_results(results(round_.results))
        for call in round_.approval_requests:
            run.approval_requested(
                round_index=call.round_index,
                sequence_index=call.sequence_index,
                tool_call_id=call.tool_call_id,
                reason=approval_reason(call) if approval_reason is not None else None,
            )


def _token_usage(record: RunRecord) -> list[TokenUsage]:
    return list(record.usage)


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
    publish_run_steps(run, record, decided_by=decided_by, approval_reason=approval_reason)
    run.complete(
        assistant_message_id=assistant_message_id or record.last_response_id or run.scope.run_id,
        finish_reason=finish_reason or record.finish_reason,
        usage=_token_usage(record) or None,
        cited_sources=cited_sources,
    )


def publish_run_failure(
    run: RunPublisher,
    record: RunRecord | None,
    error: BaseException,
    *,
    decided_by: str | None = None,
) -> None:
    """Publishes what a failed run finished (its rounds), then ``RunFailed`` with the usage of its model calls."""

    if record is not None:
        publish_run_steps(run, record, decided_by=decided_by)
    code, message = run_failure_of(error)
    run.fail(
        error=RunFailure(code=code, message=message),
        usage=(_token_usage(record) or None) if record is not None else None,
    )


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
    # Only an answer says what it cites: a run that stopped for approvals or right after tools has none.
    answer = answer_text_of(output) if cited_sources_from_answer and record.finish_reason == "stop" else None
    publish_run_record(
        run,
        record,
        assistant_message_id=assistant_message_id,
        finish_reason=finish_reason,
        decided_by=decided_by,
        approval_reason=approval_reason,
        cited_sources=None if answer is None else cited_sources_from(answer),
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
    agent_run: Any = None
    try:
        async with agent.iter(
            user_prompt,
            message_history=message_history,
            deferred_tool_results=deferred_tool_results,
            **kwargs,
        ) as agent_run:
            async for _node in agent_run:
                pass
        result = agent_run.result
        if result is None:
            raise RuntimeError("the agent run ended without a result")
    except (Exception, asyncio.CancelledError) as error:
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


def _history_before(all_messages: Sequence[ModelMessage], new_messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    return list(all_messages[: len(all_messages) - len(new_messages)])


# --- Replay -------------------------------------------------------------------------------------


def to_message_history(history: ReplayHistory | Sequence[ReplayedTurn]) -> list[ModelMessage]:
    """Every replayed turn's tool segment as PydanticAI messages, in order.

    ``history`` must be fetched with ``format="bedrock-converse"`` (``REPLAY_FORMAT``). Each round is a
    ``ModelResponse`` of ``ToolCallPart``s and a ``ModelRequest`` of their ``ToolReturnPart``s (an error
    result with ``outcome='failed'``). Pass the list as ``message_history`` (PydanticAI accepts a history
    that starts with a response), or use ``splice_message_history`` to put each turn among the host's messages.
    """
    return from_replay_messages(
        [message for turn in _turns_of(history, "to_message_history") for message in turn.messages]
    )


def splice_message_history(
    host_messages: Sequence[ModelMessage],
    history: ReplayHistory | Sequence[ReplayedTurn],
    *,
    id_of: Callable[[ModelMessage], str | None],
) -> list[ModelMessage]:
    """The host's messages with each replayed turn spliced in (``toolhistory.splice.splice_history``'s rules).

    A completed run's tools go right before the host's message ``id_of`` names as its answer, a failed
    or running run's finished rounds right after the message that started it. ``history`` as for
    ``to_message_history``.
    """

    spliced = splice_history(host_messages, _turns_of(history, "splice_message_history"), id_of=id_of)
    out: list[ModelMessage] = []
    pending: list[Mapping[str, Any]] = []
    for item in spliced:
        if isinstance(item, (ModelRequest, ModelResponse)):
            out.extend(from_replay_messages(pending))
            pending = []
            out.append(item)
        else:
            pending.append(item)
    out.extend(from_replay_messages(pending))
    return out


def _turns_of(history: ReplayHistory | Sequence[ReplayedTurn], reader: str) -> Sequence[ReplayedTurn]:
    fmt = getattr(history, "format", REPLAY_FORMAT)
    if fmt != REPLAY_FORMAT:
        raise ValueError(
            f'{reader} reads the "{REPLAY_FORMAT}" replay format, got "{fmt}": '
            f"fetch it with get_replay_history(..., format={REPLAY_FORMAT!r})"
        )
    # A ReplayHistory, or its turns (duck-typed: any objects with the fields splice_history reads).
    turns = cast("Sequence[ReplayedTurn]", getattr(history, "turns", history))
    return turns


def from_replay_messages(messages: Iterable[Mapping[str, Any]]) -> list[ModelMessage]:
    """A replayed tool segment (Bedrock Converse ``toolUse``/``toolResult`` messages) as PydanticAI messages."""
    out: list[ModelMessage] = []
    # Names of the calls not answered yet, per id in call order: ids may repeat, results follow their calls.
    open_calls: dict[str, list[str]] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        blocks = message.get("content")
        if not isinstance(blocks, list):
            raise ValueError(f"replayed message {index} has no content list: {message!r}")
        if role == "assistant":
            calls: list[ToolCallPart] = []
            for block in blocks:
                use = _block(block, "toolUse", index)
                open_calls.setdefault(use["toolUseId"], []).append(use["name"])
                calls.append(
                    ToolCallPart(tool_name=use["name"], args=use.get("input") or {}, tool_call_id=use["toolUseId"])
                )
            out.append(ModelResponse(parts=calls))
        elif role == "user":
            returns: list[ModelRequestPart] = []
            for block in blocks:
                result = _block(block, "toolResult", index)
                tool_call_id = result["toolUseId"]
                names = open_calls.get(tool_call_id)
                if not names:
                    raise ValueError(f"replayed result {tool_call_id!r} (message {index}) answers no replayed call")
                returns.append(
                    ToolReturnPart(
                        tool_name=names.pop(0),
                        content=_content_of(result.get("content"), index),
                        tool_call_id=tool_call_id,
                        outcome="failed" if result.get("status") == "error" else "success",
                    )
                )
            out.append(ModelRequest(parts=returns))
        else:
            raise ValueError(
                f'replayed message {index} has role {role!r}: not a "{REPLAY_FORMAT}" tool segment '
                f"(fetch the history with format={REPLAY_FORMAT!r})"
            )
    return out


def _block(block: object, key: str, index: int) -> dict[str, Any]:
    value = block.get(key) if isinstance(block, dict) else None
    if not isinstance(value, dict):
        raise ValueError(f"replayed message {index} holds a block without {key!r}: {block!r}")
    return cast("dict[str, Any]", value)


def _content_of(content: object, index: int) -> Any:
    """A ``toolResult``'s content: a JSON block's value as it is, text blocks as their text."""
    if not isinstance(content, list) or not content:
        raise ValueError(f"replayed message {index} holds a toolResult without content")
    if len(content) == 1 and isinstance(content[0], dict) and "json" in content[0]:
        return content[0]["json"]
    texts = [b.get("text") for b in content if isinstance(b, dict)]
    if any(not isinstance(t, str) for t in texts) or len(texts) != len(content):
        raise ValueError(f"replayed message {index} holds a toolResult block that is neither json nor text")
    return "".join(cast("list[str]", texts))
