"""What a PydanticAI run has to record, from its messages (pure: messages in, the recording core's types out)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import cast

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

from toolhistory._recording import (
    AskedCall,
    RecordedCall,
    RecordedCalls,
    RecordedDecision,
    RecordedResult,
    RecordedRound,
    RunRecord,
    aborted_failure,
    decision_on,
)
from toolhistory.events import JsonObject, JsonValue, TokenUsage
from toolhistory.limits import MAX_ID_LENGTH, MAX_JSON_DEPTH, bounded_usage, json_depth, token_count
from toolhistory.pydantic_ai._reasoning import response_of

_DEFAULT_OUTPUT_TOOL_NAME = "final_result"


def is_default_output_tool(tool_name: str) -> bool:
    """Whether a call is to one of PydanticAI's default output tools (``final_result``, ``final_result_<Type>``).

    An output tool call is the run's answer, not tool use: it is not recorded.
    """
    return tool_name == _DEFAULT_OUTPUT_TOOL_NAME or tool_name.startswith(f"{_DEFAULT_OUTPUT_TOOL_NAME}_")


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
    A round's ``response`` is what its model response said beside the calls: its ``ThinkingPart``s in its
    provider's own shapes, its calls' signatures or item ids, and its text (``response_of``).
    ``history`` is what the run was given as ``message_history``: a run that resumes with
    ``deferred_results`` answers calls made there (only those: a return of any other earlier call is not
    this run's), and their decisions and results are recorded with the round and sequence the calls had
    in the run that made them (its messages share a ``run_id``; without one, a run starts at a request
    with a user prompt). ``deferred_requests`` is the run's output when it stopped for approvals.
    """
    earlier = _earlier_calls(history, is_output_tool)
    decided = _decisions(earlier, deferred_results)
    run = _OwnRun(earlier, decided, deferred_results, is_output_tool)
    for message in messages:
        run.read(message)
    waiting_ids = {c.tool_call_id for c in deferred_requests.approvals} if deferred_requests else set()
    rounds = tuple(
        dataclasses.replace(
            round_,
            results=tuple(run.results.get(round_.round_index, ())),
            approval_requests=tuple(c for c in round_.calls if c.tool_call_id in waiting_ids and c.tool_call_id != ""),
        )
        for round_ in run.rounds
    )
    last = run.last_response
    return RunRecord(
        decisions=tuple(decided.values()),
        resumed_results=tuple(run.resumed),
        rounds=rounds,
        usage=tuple(bounded_usage(run.usage)),
        awaiting=deferred_requests is not None and bool(deferred_requests.approvals or deferred_requests.calls),
        ended_after_tools=last is not None and bool(_asked_calls(last, is_output_tool)),
        last_response_id=last.provider_response_id if last is not None else None,
    )


def _earlier_calls(history: Sequence[ModelMessage], is_output_tool: Callable[[str], bool]) -> RecordedCalls:
    """The calls of the earlier runs of ``history``, each run's rounds numbered from 0."""
    earlier = RecordedCalls()
    for run_messages in _runs_of(history):
        numbering = RecordedCalls()
        for message in run_messages:
            if isinstance(message, ModelResponse):
                round_ = numbering.open_round(_asked_calls(message, is_output_tool))
                if round_ is not None:
                    earlier.add_earlier_round(round_.calls)
    return earlier


def _decisions(earlier: RecordedCalls, deferred_results: DeferredToolResults | None) -> dict[str, RecordedDecision]:
    """The person's answers to calls of the history, keyed by where the calls sat there."""
    decided: dict[str, RecordedDecision] = {}
    for tool_call_id, answer in (deferred_results.approvals if deferred_results else {}).items():
        call = earlier.latest(tool_call_id)
        if call is None:
            continue
        approved = answer is True or isinstance(answer, ToolApproved)
        reason = None if approved else answer.message if isinstance(answer, ToolDenied) else ToolDenied().message
        decided[tool_call_id] = decision_on(call, approved, reason)
    return decided


class _OwnRun:
    """This run's messages read in order: its rounds and usage, and each return as its call's result (this run's
    own, or a resumed call's of the history)."""

    def __init__(
        self,
        earlier: RecordedCalls,
        decided: dict[str, RecordedDecision],
        deferred_results: DeferredToolResults | None,
        is_output_tool: Callable[[str], bool],
    ) -> None:
        self.calls = RecordedCalls()
        self.rounds: list[RecordedRound] = []
        self.results: dict[int, list[RecordedResult]] = {}
        self.resumed: list[RecordedResult] = []
        self.usage: list[TokenUsage] = []
        self.last_response: ModelResponse | None = None
        self._earlier = earlier
        self._decided = decided
        self._answered_ids = (
            set(deferred_results.approvals) | set(deferred_results.calls) if deferred_results else set()
        )
        self._is_output_tool = is_output_tool

    def read(self, message: ModelMessage) -> None:
        if isinstance(message, ModelResponse):
            self.last_response = message
            self.usage.append(_usage_of(message))
            round_ = self.calls.open_round(_asked_calls(message, self._is_output_tool))
            if round_ is not None:
                self.rounds.append(dataclasses.replace(round_, response=response_of(message, self._is_output_tool)))
            return
        for part in message.parts:
            answered = _returned(part)
            if answered is not None:
                self._answer(part, *answered)

    def _answer(self, part: ModelRequestPart, tool_call_id: str, tool_name: str) -> None:
        call = self.calls.open(tool_call_id, tool_name)
        if call is not None:
            self.calls.answer(call)
            result = _result_of(part, call, own_run=True)
            if result is not None:
                self.results.setdefault(call.round_index, []).append(result)
            return
        if tool_call_id not in self._answered_ids:
            # Not a call this run was given an answer for: an orphan, or the history's own.
            return
        call = self._earlier.open(tool_call_id, tool_name)
        if call is None:
            return
        self._earlier.answer(call)
        decision = self._decided.get(tool_call_id)
        if decision is not None and not decision.approved:
            # A denied call did not run: its decision says so.
            return
        result = _result_of(part, call, own_run=False)
        if result is not None:
            self.resumed.append(result)


def _asked_calls(response: ModelResponse, is_output_tool: Callable[[str], bool]) -> list[AskedCall]:
    parts = [p for p in response.parts if isinstance(p, ToolCallPart) and not is_output_tool(p.tool_name)]
    return [AskedCall(part.tool_call_id, part.tool_name, arguments_of(part)) for part in parts]


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


def _usage_of(response: ModelResponse) -> TokenUsage:
    model = response.model_name[:MAX_ID_LENGTH] if response.model_name else None
    return TokenUsage(token_count(response.usage.input_tokens), token_count(response.usage.output_tokens), model)


def answer_text_of(output: object) -> str | None:
    """The text of a run's answer (``result.output``): a text output as it is, a structured one as its JSON text;
    ``None`` for no answer (``None``, or calls waiting in a ``DeferredToolRequests``)."""
    if output is None or isinstance(output, DeferredToolRequests):
        return None
    if isinstance(output, str):
        return output
    return tool_return_ta.dump_json(output).decode()


def run_failure_of(error: BaseException) -> tuple[str, str]:
    """The (code, message) to record for what a run raised: ``aborted`` for a cancelled run, else its class name and
    its text."""
    aborted = aborted_failure(error)
    if aborted is not None:
        return aborted.code, aborted.message
    return type(error).__name__[:MAX_ID_LENGTH], str(error) or type(error).__name__
