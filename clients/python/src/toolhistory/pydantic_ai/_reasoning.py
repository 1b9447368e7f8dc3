"""Reasoning state: a ``ModelResponse``'s ``ThinkingPart``s (and the signatures on its calls) in each provider's own
shapes, which the contract records, and Converse ``reasoningContent`` blocks back as ``ThinkingPart``s.

PydanticAI keeps every provider's reasoning as ``ThinkingPart(content, id, signature, provider_name)``: Anthropic's
``thinking`` (a ``redacted_thinking`` block as ``id="redacted_thinking"`` with its data as the signature), OpenAI's
``reasoning`` items (one part per summary, the item's id, its ``encrypted_content`` as the signature), Gemini's
thought parts (their ``thoughtSignature``; a call's own in its ``provider_details``), Bedrock's ``reasoningContent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_ai.messages import ModelResponse, TextPart, ThinkingPart, ToolCallPart

from toolhistory._recording import RecordedResponse, ResponseReasoning
from toolhistory.limits import MAX_ID_LENGTH

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from toolhistory.events import JsonObject

# PydanticAI's provider names -> the provider the contract names (any other is recorded as it is).
_PROVIDERS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "azure": "openai",
    "google-gla": "google",
    "google-vertex": "google",
    "google": "google",
    "google-cloud": "google",
    "bedrock": "bedrock",
}
_REDACTED_IDS = ("redacted_thinking", "redacted_content")
BEDROCK_PROVIDER = "bedrock"
ANTHROPIC_PROVIDER = "anthropic"
# The provider_name PydanticAI's own models give the parts they produce, which their request mappings check before
# sending a signature or encrypted content back (``GoogleProvider`` is ``google``, OpenAI's Responses model ``openai``).
GOOGLE_PROVIDER = "google"
OPENAI_PROVIDER = "openai"


def provider_of(response: ModelResponse) -> str | None:
    """The provider whose reasoning the response carries: its parts' ``provider_name``, else the response's."""
    named = next(
        (part.provider_name for part in response.parts if isinstance(part, ThinkingPart) and part.provider_name),
        response.provider_name,
    )
    return _PROVIDERS.get(named, named) if named else None


def response_of(response: ModelResponse, is_output_tool: Callable[[str], bool]) -> RecordedResponse | None:
    """What a model response that asked for tools records beside its calls: its thinking in its provider's shapes,
    its calls' signatures (Gemini) or item ids (OpenAI), and its text. ``None`` when it has none of them, or its
    provider or model is unknown (reasoning goes back only to where it came from)."""
    provider, model = provider_of(response), response.model_name
    if provider is None or not model:
        return None
    thinking = [part for part in response.parts if isinstance(part, ThinkingPart)]
    calls = [p for p in response.parts if isinstance(p, ToolCallPart) and not is_output_tool(p.tool_name)]
    items = _items_of(provider, thinking)
    signatures: dict[str, str] = {}
    item_ids: dict[str, str] = {}
    for call in calls:
        signature = (call.provider_details or {}).get("thought_signature")
        if provider == "google" and isinstance(signature, str) and signature and call.tool_call_id:
            signatures[call.tool_call_id] = signature
        if provider == "openai" and call.id and call.tool_call_id:
            item_ids[call.tool_call_id] = call.id
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    if not items and not signatures and not item_ids and not text:
        return None
    reasoning = ResponseReasoning(provider, model[:MAX_ID_LENGTH], tuple(items), signatures, item_ids)
    return RecordedResponse(reasoning, text or None)


def _items_of(provider: str, thinking: list[ThinkingPart]) -> list[JsonObject]:
    if provider == "openai":
        return _openai_items(thinking)
    shape = _SHAPES.get(provider, _other)
    return [shape(part) for part in thinking]


def _anthropic(part: ThinkingPart) -> JsonObject:
    if part.id in _REDACTED_IDS:
        return {"type": "redacted_thinking", "data": part.signature or ""}
    return {"type": "thinking", "thinking": part.content, **_given("signature", part.signature)}


def _google(part: ThinkingPart) -> JsonObject:
    # PydanticAI's Google model keeps a thought part's signature in its provider_details, as on a call.
    signature = part.signature or (part.provider_details or {}).get("thought_signature")
    return {"text": part.content, "thought": True, **_given("thoughtSignature", signature)}


def _bedrock(part: ThinkingPart) -> JsonObject:
    if part.id in _REDACTED_IDS:
        return {"reasoningContent": {"redactedContent": part.signature or ""}}
    return {"reasoningContent": {"reasoningText": {"text": part.content, **_given("signature", part.signature)}}}


def _other(part: ThinkingPart) -> JsonObject:
    return {
        "type": "thinking",
        "thinking": part.content,
        **_given("id", part.id),
        **_given("signature", part.signature),
    }


_SHAPES: Mapping[str, Callable[[ThinkingPart], JsonObject]] = {
    "anthropic": _anthropic,
    "google": _google,
    "bedrock": _bedrock,
}


def _openai_items(thinking: list[ThinkingPart]) -> list[JsonObject]:
    """OpenAI reasoning items: the parts of one item (its summaries) share its id."""
    items: list[JsonObject] = []
    by_id: dict[str, JsonObject] = {}
    for part in thinking:
        item = by_id.get(part.id or "") if part.id else None
        if item is None:
            item = {"type": "reasoning", **_given("id", part.id), "summary": []}
            items.append(item)
            if part.id:
                by_id[part.id] = item
        if part.content:
            summary = item["summary"]
            assert isinstance(summary, list)
            summary.append({"type": "summary_text", "text": part.content})
        if part.signature:
            item["encrypted_content"] = part.signature
    return items


def _given(key: str, value: str | None) -> dict[str, Any]:
    return {key: value} if value else {}


def thinking_of_converse(block: Mapping[str, Any]) -> ThinkingPart | None:
    """A Converse ``reasoningContent`` block as the ``ThinkingPart`` PydanticAI's Bedrock model sends back."""
    content = block.get("reasoningContent")
    if not isinstance(content, dict):
        return None
    if "redactedContent" in content:
        return ThinkingPart(
            content="", id="redacted_content", signature=str(content["redactedContent"]), provider_name=BEDROCK_PROVIDER
        )
    text = content.get("reasoningText")
    text = text if isinstance(text, dict) else {}
    signature = text.get("signature")
    return ThinkingPart(
        content=str(text.get("text", "")),
        signature=signature if isinstance(signature, str) else None,
        provider_name=BEDROCK_PROVIDER,
    )


def thinking_of_gemini(part: Mapping[str, Any]) -> ThinkingPart:
    """A Gemini thought part as the ``ThinkingPart`` PydanticAI's Google model makes of it: its signature in the
    part's ``provider_details`` (sent back on the part itself), the provider named only when it is signed."""
    signature = part.get("thoughtSignature")
    if not isinstance(signature, str) or not signature:
        return ThinkingPart(content=str(part.get("text", "")))
    return ThinkingPart(
        content=str(part.get("text", "")),
        provider_name=GOOGLE_PROVIDER,
        provider_details={"thought_signature": signature},
    )


def thinking_of_openai(item: Mapping[str, Any]) -> list[ThinkingPart]:
    """An OpenAI Responses reasoning item as PydanticAI's OpenAI Responses model keeps it: a part per summary under
    the item's id, its ``encrypted_content`` as the first part's signature (one part without text when it has none)."""
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    encrypted = item.get("encrypted_content")
    signature = encrypted if isinstance(encrypted, str) and encrypted else None
    summaries = [s for s in item.get("summary") or [] if isinstance(s, dict)]
    parts: list[ThinkingPart] = []
    for summary in summaries:
        parts.append(
            ThinkingPart(
                content=str(summary.get("text", "")), id=item_id, signature=signature, provider_name=OPENAI_PROVIDER
            )
        )
        signature = None
    if not summaries and signature:
        parts.append(ThinkingPart(content="", id=item_id, signature=signature, provider_name=OPENAI_PROVIDER))
    return parts
