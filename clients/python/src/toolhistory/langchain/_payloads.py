"""Pure mapping: LangChain objects in, contract values out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TypeGuard

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import Command

from toolhistory._recording import ToolOutcome, aborted_failure, bounded_usage, fitted_failure
from toolhistory.events import JsonObject, JsonValue, RunFailure, TokenUsage
from toolhistory.events import ToolCall as RecordedToolCall
from toolhistory.limits import MAX_ID_LENGTH, MAX_INDEX

__all__ = [
    "ToolOutcome",
    "bounded_usage",
    "canonical_json",
    "error_result_of",
    "failure_of",
    "to_json_object",
    "to_json_value",
    "token_usage_of",
    "tool_calls_of",
    "tool_messages_in",
    "tool_outcome_of",
]


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
    """RunFailed's error: ``aborted`` for a cancelled run; else LangChain's error code or the error's string ``code``,
    else its class name; its message."""
    aborted = aborted_failure(error)
    if aborted is not None:
        return aborted
    code = next(
        (
            candidate
            for candidate in (getattr(error, "lc_error_code", None), getattr(error, "code", None))
            if isinstance(candidate, str) and candidate
        ),
        type(error).__name__,
    )
    # A message longer than the contract's fit is cut: it explains, the full error stays with the host.
    return fitted_failure(code, str(error) or type(error).__name__)


def canonical_json(value: JsonValue) -> str:
    """Arguments as canonical JSON: matches a tool run to a call the model gave no id."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INDEX


def _non_null(value: JsonValue) -> JsonValue:
    return "" if value is None else value
