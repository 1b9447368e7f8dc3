"""The framework's messages as the provider sorts them (questions, messages of tool use, the results left out per
run), a call's id and arguments and a result's text as it records them, and a replayed turn (OpenAI chat messages)
as the framework's messages."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent_framework import Content, Message

from toolhistory._failed_results import failed_results_as_recorded

if TYPE_CHECKING:
    from toolhistory.replay import ReplayedTurn

_TOOL_CONTENT_TYPES = frozenset(
    {"function_call", "function_result", "function_approval_request", "function_approval_response"}
)


@dataclass(frozen=True)
class _TurnView:
    assistant_message_id: str
    after_message_id: str
    messages: list[Message]

    @staticmethod
    def of(turn: ReplayedTurn) -> _TurnView:
        return _TurnView(turn.assistant_message_id, turn.after_message_id, _messages_of(turn))


def _messages_of(turn: ReplayedTurn) -> list[Message]:
    """A replayed turn (OpenAI chat messages) as the framework's messages; a failed call's result as the framework
    sent it (the recorded text, unless the service replaced it: an expiry, an invalidation, an interrupted side
    effect or a denial say why)."""
    failed = failed_results_as_recorded(turn.rounds)
    out: list[Message] = []
    for message in turn.messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "assistant":
            contents: list[Content] = []
            if message.get("content"):
                contents.append(Content.from_text(str(message["content"])))
            for tool_call in message.get("tool_calls") or []:
                function = tool_call["function"]
                contents.append(
                    Content.from_function_call(
                        tool_call["id"], function["name"], arguments=_arguments(function["arguments"])
                    )
                )
            out.append(Message("assistant", contents))
        elif message.get("role") == "tool":
            call_id = str(message["tool_call_id"])
            result = failed.get(call_id, message.get("content"))
            if call_id in failed:
                content = Content.from_function_result(call_id, result=result, exception="FunctionInvocationError")
            else:
                content = Content.from_function_result(call_id, result=result)
            # The framework answers a round's calls in one tool message.
            if out and out[-1].role == "tool":
                out[-1].contents.append(content)
            else:
                out.append(Message("tool", [content]))
    return out


def _trimmed(messages: Sequence[Message]) -> list[Message]:
    """The messages without the function results after the last model response (per-run persistence)."""
    end = len(messages)
    while end > 0 and all(c.type == "function_result" for c in messages[end - 1].contents):
        end -= 1
    return list(messages[:end])


def _is_question(message: Message) -> bool:
    """A user's message that is not an answer to an approval request."""
    return message.role == "user" and not _is_tool_message(message)


def _is_tool_message(message: Message) -> bool:
    return any(content.type in _TOOL_CONTENT_TYPES for content in message.contents)


def _message_id(message: Message) -> str | None:
    return message.message_id or None


def _call_id(call: Content) -> str:
    """The call's id; without one from the model, the id the framework gives its result (the call's own ``id``)."""
    return call.call_id or call.id or ""


def _arguments(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str) and arguments:
        parsed = json.loads(arguments)
        if isinstance(parsed, dict):
            return parsed
    return {}


def _result_text(content: Content) -> str:
    result = content.result
    if result is None:
        return ""
    return result if isinstance(result, str) else json.dumps(result, default=str)
