"""Replay: the service's history as LangChain messages."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from toolhistory.langchain._reasoning import replayed_ai_message
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from toolhistory.replay import ReplayedTurn, ReplayHistory


def to_langchain_messages(
    history: ReplayHistory | Sequence[ReplayedTurn] | toolhistory_pb2.GetReplayHistoryResponse | Sequence[Any],
) -> list[BaseMessage]:
    """LangChain's messages for replayed tool history, to put before the user's new message.

    Per round one AIMessage with the round's ``tool_calls`` (id, name, args), then one ToolMessage per call in
    order (``status="error"`` for an error result). The AIMessage carries the round's text and the reasoning the
    service replayed with it (for the provider and model the history was asked for) where that provider's LangChain
    integration sends it back: Anthropic ``thinking`` / ``redacted_thinking`` blocks first in its content, OpenAI
    Responses ``reasoning`` items and ``function_call`` blocks with their ``fc_`` ids (``responses/v1``), Gemini
    ``thinking`` blocks and the calls' thought signatures in ``additional_kwargs``, Converse ``reasoning_content``
    blocks. Takes a :class:`~toolhistory.replay.ReplayHistory` (or its
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
    tool_calls = [
        {
            "type": "tool_call",
            "id": call.tool_call_id,
            "name": call.tool_name,
            "args": _parse_arguments(call.arguments_json, call.tool_call_id),
        }
        for call in calls
    ]
    return [
        replayed_ai_message(round_, tool_calls),
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
