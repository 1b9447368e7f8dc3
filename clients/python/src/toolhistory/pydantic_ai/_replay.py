"""Replay: a ``bedrock-converse`` history (or an ``anthropic``, ``gemini`` or ``openai-responses`` one, for that
provider's reasoning) as PydanticAI's ``message_history``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)

from toolhistory.pydantic_ai._reasoning import (
    ANTHROPIC_PROVIDER,
    GOOGLE_PROVIDER,
    OPENAI_PROVIDER,
    thinking_of_converse,
    thinking_of_gemini,
    thinking_of_openai,
)
from toolhistory.replay import GEMINI_PLACEHOLDER_SIGNATURE
from toolhistory.splice import splice_history

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from toolhistory.replay import ReplayedTurn, ReplayHistory

REPLAY_FORMAT = "bedrock-converse"
"""The history format ``to_message_history`` reads: ask ``get_replay_history(..., format=REPLAY_FORMAT)``."""
REASONING_FORMATS: dict[str, str] = {
    "bedrock": REPLAY_FORMAT,
    "anthropic": "anthropic",
    "google": "gemini",
    "openai": "openai-responses",
}
"""The format to ask for to get a provider's reasoning back as ``ThinkingPart``s (by the contract's provider name):
``to_message_history`` reads these four; any other provider's rounds come back without it from ``REPLAY_FORMAT``."""


def to_message_history(history: ReplayHistory | Sequence[ReplayedTurn]) -> list[ModelMessage]:
    """Every replayed turn's tool segment as PydanticAI messages, in order.

    ``history`` must be fetched with ``format="bedrock-converse"`` (``REPLAY_FORMAT``). Each round is a
    ``ModelResponse`` of ``ToolCallPart``s and a ``ModelRequest`` of their ``ToolReturnPart``s (an error
    result with ``outcome='failed'``). The response starts with the round's reasoning as ``ThinkingPart``s
    (signatures intact; replayed while its turn goes on, to the provider and model that produced it), then its
    text as a ``TextPart``, so that the next request carries them where the model left them. A history fetched
    with ``format="anthropic"``, ``"gemini"`` or ``"openai-responses"`` is read too, for an Anthropic, Gemini or
    OpenAI Responses model's reasoning (``REASONING_FORMATS``), as PydanticAI's own model for that provider keeps it
    (Gemini signatures in ``provider_details``, OpenAI ``fc_`` ids on the calls); there a JSON result may come back
    as its text. Pass the list as
    ``message_history`` (PydanticAI accepts a history that starts with a response), or use
    ``splice_message_history`` to put each turn among the host's messages.
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
    if fmt not in REASONING_FORMATS.values():
        raise ValueError(
            f'{reader} reads the "{REPLAY_FORMAT}" replay format, got "{fmt}": '
            f"fetch it with get_replay_history(..., format={REPLAY_FORMAT!r})"
        )
    # A ReplayHistory, or its turns (duck-typed: any objects with the fields splice_history reads).
    turns = cast("Sequence[ReplayedTurn]", getattr(history, "turns", history))
    return turns


def from_replay_messages(messages: Iterable[Mapping[str, Any]]) -> list[ModelMessage]:
    """A replayed tool segment (Bedrock Converse ``toolUse``/``toolResult`` messages, Anthropic ``tool_use`` /
    ``tool_result`` ones, Gemini ``functionCall`` / ``functionResponse`` contents, or OpenAI Responses items) as
    PydanticAI messages."""
    messages = list(messages)
    if any(isinstance(m.get("type"), str) for m in messages):
        return _from_responses_items(messages)
    out: list[ModelMessage] = []
    # Names of the calls not answered yet, per id in call order: ids may repeat, results follow their calls.
    open_calls: dict[str, list[str]] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role in ("model", "user") and isinstance(message.get("parts"), list):
            out.append(_from_gemini_content(role, message["parts"], open_calls, index))
            continue
        blocks = message.get("content")
        if not isinstance(blocks, list):
            raise ValueError(f"replayed message {index} has no content list: {message!r}")
        if role == "assistant":
            parts: list[ModelResponsePart] = []
            for block in blocks:
                # The round's reasoning (recorded through the format's provider) first, then its text, then its calls.
                part = _anthropic_response_part(block, index) if _is_anthropic(block) else _converse_part(block, index)
                if isinstance(part, ToolCallPart):
                    open_calls.setdefault(part.tool_call_id, []).append(part.tool_name)
                parts.append(part)
            signed_by = next((p.provider_name for p in parts if isinstance(p, ThinkingPart)), None)
            out.append(ModelResponse(parts=parts, provider_name=signed_by))
        elif role == "user":
            returns: list[ModelRequestPart] = []
            for block in blocks:
                tool_call_id, content, is_error = (
                    _anthropic_result(block, index) if _is_anthropic(block) else _converse_result(block, index)
                )
                names = open_calls.get(tool_call_id)
                if not names:
                    raise ValueError(f"replayed result {tool_call_id!r} (message {index}) answers no replayed call")
                returns.append(
                    ToolReturnPart(
                        tool_name=names.pop(0),
                        content=content,
                        tool_call_id=tool_call_id,
                        outcome="failed" if is_error else "success",
                    )
                )
            out.append(ModelRequest(parts=returns))
        else:
            raise ValueError(
                f'replayed message {index} has role {role!r}: not a "{REPLAY_FORMAT}" tool segment '
                f"(fetch the history with format={REPLAY_FORMAT!r})"
            )
    return out


def _answering(open_calls: dict[str, list[str]], tool_call_id: str, index: int) -> str:
    """The name of the earliest unanswered replayed call with this id."""
    names = open_calls.get(tool_call_id)
    if not names:
        raise ValueError(f"replayed result {tool_call_id!r} (message {index}) answers no replayed call")
    return names.pop(0)


def _from_gemini_content(role: str, parts: list[Any], open_calls: dict[str, list[str]], index: int) -> ModelMessage:
    """A Gemini ``model`` content (thought parts, text, signed ``functionCall`` parts) or ``user`` content of
    ``functionResponse`` parts, as PydanticAI's Google model keeps them."""
    if role == "model":
        response_parts: list[ModelResponsePart] = []
        for part in parts:
            if not isinstance(part, dict):
                raise ValueError(f"replayed message {index} holds a part that is no object: {part!r:.120}")
            if part.get("thought") is True:
                response_parts.append(thinking_of_gemini(part))
            elif isinstance(part.get("text"), str):
                response_parts.append(TextPart(content=part["text"]))
            else:
                call = _gemini_call(part, index)
                open_calls.setdefault(call.tool_call_id, []).append(call.tool_name)
                response_parts.append(call)
        return ModelResponse(parts=response_parts, provider_name=GOOGLE_PROVIDER)
    returns: list[ModelRequestPart] = []
    for part in parts:
        answer = _block(part, "functionResponse", index)
        response = answer.get("response")
        if not isinstance(answer.get("id"), str) or not isinstance(response, dict):
            raise ValueError(f"replayed message {index} holds a functionResponse without id or response: {part!r:.120}")
        failed = set(response) == {"error"}
        # The service wraps a result that is no JSON object under "output", an error under "error".
        content = response["error"] if failed else response["output"] if set(response) == {"output"} else response
        returns.append(
            ToolReturnPart(
                tool_name=_answering(open_calls, answer["id"], index),
                content=content,
                tool_call_id=answer["id"],
                outcome="failed" if failed else "success",
            )
        )
    return ModelRequest(parts=returns)


def _gemini_call(part: dict[str, Any], index: int) -> ToolCallPart:
    call = _block(part, "functionCall", index)
    if not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
        raise ValueError(f"replayed message {index} holds a functionCall without id or name: {part!r:.120}")
    signature = part.get("thoughtSignature")
    if not isinstance(signature, str) or signature in ("", GEMINI_PLACEHOLDER_SIGNATURE):
        # No signature of its own: PydanticAI's Google model puts the placeholder on a step's first call itself.
        return ToolCallPart(tool_name=call["name"], args=call.get("args") or {}, tool_call_id=call["id"])
    return ToolCallPart(
        tool_name=call["name"],
        args=call.get("args") or {},
        tool_call_id=call["id"],
        provider_name=GOOGLE_PROVIDER,
        provider_details={"thought_signature": signature},
    )


def _from_responses_items(items: list[Mapping[str, Any]]) -> list[ModelMessage]:
    """OpenAI Responses items as PydanticAI's OpenAI Responses model keeps them: per round, a response of the
    round's reasoning (``ThinkingPart``s under the item's id), its text and its calls (with their ``fc_`` ids), then
    a request of the calls' outputs."""
    out: list[ModelMessage] = []
    open_calls: dict[str, list[str]] = {}
    response_parts: list[ModelResponsePart] = []
    returns: list[ModelRequestPart] = []
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call_output":
            if response_parts:
                out.append(ModelResponse(parts=response_parts, provider_name=OPENAI_PROVIDER))
                response_parts = []
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise ValueError(f"replayed item {index} is a function_call_output without call_id: {item!r:.120}")
            output = item.get("output")
            returns.append(
                ToolReturnPart(
                    tool_name=_answering(open_calls, call_id, index),
                    content=output if isinstance(output, str) else json.dumps(output),
                    tool_call_id=call_id,
                )
            )
            continue
        if returns:
            out.append(ModelRequest(parts=returns))
            returns = []
        if kind == "reasoning":
            response_parts.extend(thinking_of_openai(item))
        elif kind == "message" and item.get("role") == "assistant":
            response_parts.append(TextPart(content=_output_text(item.get("content"), index)))
        elif kind == "function_call" and isinstance(item.get("call_id"), str) and isinstance(item.get("name"), str):
            item_id = item.get("id")
            response_parts.append(
                ToolCallPart(
                    tool_name=item["name"],
                    args=item.get("arguments") or "{}",
                    tool_call_id=item["call_id"],
                    id=item_id if isinstance(item_id, str) else None,
                    provider_name=OPENAI_PROVIDER,
                )
            )
            open_calls.setdefault(item["call_id"], []).append(item["name"])
        else:
            raise ValueError(f"replayed item {index} is an OpenAI Responses item replay never gives: {item!r:.120}")
    if response_parts:
        out.append(ModelResponse(parts=response_parts, provider_name=OPENAI_PROVIDER))
    if returns:
        out.append(ModelRequest(parts=returns))
    return out


def _output_text(content: object, index: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise ValueError(f"replayed item {index} is an assistant message without text")


def _is_anthropic(block: object) -> bool:
    """An Anthropic Messages block (``type``-tagged), rather than a Converse one (keyed by its kind)."""
    return isinstance(block, dict) and isinstance(block.get("type"), str)


def _converse_part(block: object, index: int) -> ModelResponsePart:
    thinking = thinking_of_converse(block) if isinstance(block, dict) else None
    if thinking is not None:
        return thinking
    if isinstance(block, dict) and isinstance(block.get("text"), str):
        return TextPart(content=block["text"])
    use = _block(block, "toolUse", index)
    return ToolCallPart(tool_name=use["name"], args=use.get("input") or {}, tool_call_id=use["toolUseId"])


def _converse_result(block: object, index: int) -> tuple[str, Any, bool]:
    result = _block(block, "toolResult", index)
    return result["toolUseId"], _content_of(result.get("content"), index), result.get("status") == "error"


def _anthropic_response_part(block: dict[str, Any], index: int) -> ModelResponsePart:
    kind = block["type"]
    if kind == "thinking":
        return ThinkingPart(
            content=str(block.get("thinking", "")), signature=block.get("signature"), provider_name=ANTHROPIC_PROVIDER
        )
    if kind == "redacted_thinking":
        # How PydanticAI keeps a redacted block: its data as the signature, under this id.
        return ThinkingPart(
            content="", id="redacted_thinking", signature=str(block.get("data", "")), provider_name=ANTHROPIC_PROVIDER
        )
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(content=block["text"])
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
        return ToolCallPart(tool_name=block["name"], args=block.get("input") or {}, tool_call_id=block["id"])
    raise ValueError(f"replayed message {index} holds an Anthropic block replay never gives: {block!r:.120}")


def _anthropic_result(block: dict[str, Any], index: int) -> tuple[str, Any, bool]:
    content = block.get("content")
    if block.get("type") != "tool_result" or not isinstance(block.get("tool_use_id"), str):
        raise ValueError(f"replayed message {index} holds a block that is no tool_result: {block!r:.120}")
    if isinstance(content, list):
        content = "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return block["tool_use_id"], content if isinstance(content, str) else "", block.get("is_error") is True


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
