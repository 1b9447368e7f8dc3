"""Reasoning state: what a chat model's AIMessage carries of it, in each provider's own shapes (what the contract
records), and back into the AIMessage shapes each LangChain integration sends to its provider again.

Each integration keeps it in its own place: langchain-anthropic ``thinking`` / ``redacted_thinking`` content blocks
(signatures inside); langchain-openai's Responses ``reasoning`` items (content blocks, or ``additional_kwargs`` in its
older output) and its calls' ``fc_`` ids; langchain-google-genai ``thinking`` blocks and the calls' thought signatures
in ``additional_kwargs``; langchain-aws (Converse) ``reasoning_content`` blocks. A model set to
``output_version="v1"`` gives LangChain's standard blocks instead (``reasoning`` blocks, the provider's other fields in
``extras``, what has no standard block as ``non_standard``): they are read back into the provider's own shapes first,
so a round records the same whichever output its model gives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage

from toolhistory._recording import ResponseReasoning
from toolhistory.events import JsonObject
from toolhistory.replay import GEMINI_PLACEHOLDER_SIGNATURE

OPENAI_CALL_IDS = "__openai_function_call_ids__"
"""Where langchain-openai keeps its calls' ``fc_`` ids (its output before ``responses/v1``)."""
GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"
"""Where langchain-google-genai keeps each call's thought signature, by tool call id."""

# LangChain's model_provider (response_metadata) -> the provider the contract names.
_PROVIDERS = {
    "openai": "openai",
    "azure": "openai",
    "anthropic": "anthropic",
    "google_genai": "google",
    "google_vertexai": "google",
    "google": "google",
    "bedrock_converse": "bedrock",
    "bedrock": "bedrock",
}
# Keys LangChain adds to a provider's block (a streamed block's position), which are no part of the provider's item.
_LANGCHAIN_KEYS = ("index",)


def provider_of(message: AIMessage) -> str | None:
    """The provider whose reasoning ``message`` carries: its ``model_provider``, else told by what it carries."""
    named = message.response_metadata.get("model_provider")
    if isinstance(named, str) and named in _PROVIDERS:
        return _PROVIDERS[named]
    if _standard_output(message):
        # Standard blocks look alike for every provider; only OpenAI's item ids and Gemini's signatures tell.
        if GEMINI_SIGNATURES in message.additional_kwargs:
            return "google"
        reasoning_ids = [block.get("id") for block in _blocks(message) if block.get("type") == "reasoning"]
        return "openai" if any(isinstance(id_, str) and id_.startswith("rs_") for id_ in reasoning_ids) else None
    blocks = _blocks(message)
    kinds = {block.get("type") for block in blocks}
    if GEMINI_SIGNATURES in message.additional_kwargs:
        return "google"
    if "reasoning_content" in kinds:
        return "bedrock"
    if "redacted_thinking" in kinds or "thinking" in kinds:
        return "anthropic"
    if "reasoning" in message.additional_kwargs or OPENAI_CALL_IDS in message.additional_kwargs:
        return "openai"
    if any(block.get("type") == "reasoning" and "summary" in block for block in blocks):
        return "openai"
    return None


def model_of(message: AIMessage, called_model: str | None) -> str | None:
    """The model that answered: as the response names it, else as the call asked for it."""
    for key in ("model_name", "model", "model_id"):
        named = message.response_metadata.get(key)
        if isinstance(named, str) and named:
            return named
    return called_model


def reasoning_of(message: object, called_model: str | None = None) -> ResponseReasoning | None:
    """The reasoning state of a model output that asked for tools, in its provider's own shapes (published with the
    output's text); ``None`` when it carries neither, or its provider or model is unknown (reasoning goes back only to
    where it came from)."""
    if not isinstance(message, AIMessage) or not message.tool_calls:
        return None
    provider, model = provider_of(message), model_of(message, called_model)
    if provider is None or model is None:
        return None
    blocks = _provider_blocks(message, provider) if _standard_output(message) else _blocks(message)
    call_ids = {call["id"] for call in message.tool_calls if call.get("id")}
    items: list[JsonObject] = []
    signatures: dict[str, str] = {}
    item_ids: dict[str, str] = {}
    if provider == "anthropic":
        items = [_own(block) for block in blocks if block.get("type") in ("thinking", "redacted_thinking")]
    elif provider == "openai":
        legacy = message.additional_kwargs.get("reasoning")
        listed = [_own(block) for block in blocks if block.get("type") == "reasoning" and "summary" in block]
        items = listed or ([_own(legacy)] if isinstance(legacy, Mapping) else [])
        items = [item if "type" in item else {"type": "reasoning", **item} for item in items]
        item_ids = _text_map(message.additional_kwargs.get(OPENAI_CALL_IDS))
        for block in blocks:
            if block.get("type") == "function_call" and isinstance(block.get("id"), str):
                item_ids[str(block.get("call_id"))] = block["id"]
    elif provider == "google":
        items = [_gemini_thought(block) for block in blocks if block.get("type") == "thinking"]
        signatures = _text_map(message.additional_kwargs.get(GEMINI_SIGNATURES))
    elif provider == "bedrock":
        items = [_converse_reasoning(block) for block in blocks if block.get("type") == "reasoning_content"]
    signatures = {call: value for call, value in signatures.items() if call in call_ids}
    item_ids = {call: value for call, value in item_ids.items() if call in call_ids}
    if not items and not signatures and not item_ids and not message.text:
        return None
    return ResponseReasoning(provider, model, tuple(items), signatures, item_ids)


def replayed_ai_message(round_: Any, tool_calls: Sequence[dict[str, Any]]) -> AIMessage:
    """A replayed round's AIMessage, its recorded text and reasoning (``reasoning_json``: only what the service
    replays for the provider and model asked for) where the round's provider's integration reads them."""
    provider = getattr(round_, "provider", "") or ""
    text = getattr(round_, "text", "") or ""
    items = _items_of(round_)
    signatures = dict(getattr(round_, "call_signatures", {}) or {})
    item_ids = dict(getattr(round_, "call_item_ids", {}) or {})
    text_blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    if provider == "google" and getattr(round_, "reasoning_placeholder", False) and tool_calls:
        signatures.setdefault(tool_calls[0]["id"], GEMINI_PLACEHOLDER_SIGNATURE)
    if not items and not signatures and not item_ids:
        return AIMessage(content=text, tool_calls=list(tool_calls))
    metadata: dict[str, Any] = {"model_provider": _integration_of(provider), "model_name": round_.model}
    extra: dict[str, Any] = {}
    if provider == "anthropic":
        content: list[Any] = [*items, *text_blocks]
    elif provider == "openai":
        metadata["output_version"] = "responses/v1"
        calls = [
            {
                "type": "function_call",
                "id": item_ids[call["id"]],
                "call_id": call["id"],
                "name": call["name"],
                "arguments": json.dumps(call["args"], ensure_ascii=False),
            }
            for call in tool_calls
            if call["id"] in item_ids
        ]
        content = [*items, *text_blocks, *calls]
    elif provider == "google":
        content = [_langchain_thinking(item) for item in items] + text_blocks
        if signatures:
            extra[GEMINI_SIGNATURES] = signatures
    elif provider == "bedrock":
        content = [_langchain_reasoning_content(item) for item in items] + text_blocks
    else:
        content = [*items, *text_blocks]
    return AIMessage(content=content, tool_calls=list(tool_calls), additional_kwargs=extra, response_metadata=metadata)


def _integration_of(provider: str) -> str:
    return {"google": "google_genai", "bedrock": "bedrock_converse"}.get(provider, provider)


def _items_of(round_: Any) -> list[JsonObject]:
    raw = getattr(round_, "reasoning_json", "") or ""
    if not raw:
        return []
    parsed = json.loads(raw)
    if not isinstance(parsed, list) or not all(isinstance(item, dict) for item in parsed):
        raise ValueError(f"round {getattr(round_, 'round_index', '?')}: reasoning_json is not a JSON array of objects")
    return cast("list[JsonObject]", parsed)


def _blocks(message: AIMessage) -> list[dict[str, Any]]:
    content = message.content
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _standard_output(message: AIMessage) -> bool:
    """Whether the message holds LangChain's standard content blocks (a model with ``output_version="v1"``)."""
    return message.response_metadata.get("output_version") == "v1"


def _provider_blocks(message: AIMessage, provider: str) -> list[dict[str, Any]]:
    """LangChain's standard blocks read back into the provider's own (the inverse of langchain-core's block
    translators): its reasoning, and for OpenAI the calls' ``fc_`` ids as ``function_call`` blocks."""
    native: list[dict[str, Any]] = []
    for block in _blocks(message):
        kind = block.get("type")
        if kind == "non_standard" and isinstance(block.get("value"), dict):
            native.append(block["value"])
        elif kind == "reasoning" and provider == "openai":
            _add_openai_reasoning(native, block)
        elif kind == "reasoning":
            native.append(_provider_reasoning(block, provider))
        elif kind == "tool_call" and provider == "openai" and isinstance(_extras(block).get("item_id"), str):
            native.append({"type": "function_call", "id": _extras(block)["item_id"], "call_id": block.get("id")})
        elif kind == "text":
            native.append(block)
    return native


def _provider_reasoning(block: Mapping[str, Any], provider: str) -> dict[str, Any]:
    """A standard reasoning block as Anthropic's or Gemini's ``thinking`` block, or Converse's ``reasoning_content``."""
    extras = dict(_extras(block))
    text = block.get("reasoning")
    if provider == "bedrock":
        content: dict[str, Any] = {}
        if text:
            content["text"] = text
        for key in ("signature", "redacted_content"):
            if key in extras:
                content[key] = extras.pop(key)
        return {"type": "reasoning_content", "reasoning_content": content, **extras}
    return {"type": "thinking", "thinking": text or "", **extras}


def _add_openai_reasoning(native: list[dict[str, Any]], block: Mapping[str, Any]) -> None:
    """A standard reasoning block back into its Responses reasoning item: langchain-core makes one block per summary
    part, each with the item's id, the item's other fields (``encrypted_content``) on the first."""
    item_id = block.get("id")
    last = native[-1] if native else None
    if last is not None and last.get("type") == "reasoning" and item_id is not None and last.get("id") == item_id:
        item = last
    else:
        item = {"type": "reasoning", **({"id": item_id} if item_id is not None else {}), "summary": []}
        native.append(item)
    if "reasoning" in block:
        item["summary"].append({"type": "summary_text", "text": block["reasoning"]})
    others = {key: value for key, value in block.items() if key not in ("type", "id", "reasoning", "extras", "index")}
    for key, value in {**_extras(block), **others}.items():
        item.setdefault(key, value)


def _extras(block: Mapping[str, Any]) -> Mapping[str, Any]:
    extras = block.get("extras")
    return extras if isinstance(extras, Mapping) else {}


def _own(block: Mapping[str, Any]) -> JsonObject:
    """A provider's block as the provider produced it: without what LangChain added."""
    return cast("JsonObject", {key: value for key, value in block.items() if key not in _LANGCHAIN_KEYS})


def _text_map(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(key): entry for key, entry in value.items() if isinstance(entry, str) and entry}


def _gemini_thought(block: Mapping[str, Any]) -> JsonObject:
    """langchain-google-genai's thinking block as Gemini's thought part."""
    signature = block.get("signature")
    part: JsonObject = {"text": str(block.get("thinking", "")), "thought": True}
    if isinstance(signature, str) and signature:
        part["thoughtSignature"] = signature
    return part


def _langchain_thinking(part: Mapping[str, Any]) -> dict[str, Any]:
    """Gemini's thought part as langchain-google-genai's thinking block."""
    block: dict[str, Any] = {"type": "thinking", "thinking": part.get("text", "")}
    if isinstance(part.get("thoughtSignature"), str):
        block["signature"] = part["thoughtSignature"]
    return block


def _converse_reasoning(block: Mapping[str, Any]) -> JsonObject:
    """langchain-aws's reasoning_content block as Converse's reasoningContent block."""
    content = block.get("reasoning_content")
    content = content if isinstance(content, Mapping) else {}
    redacted = content.get("redacted_content") or content.get("redactedContent")
    if redacted is not None:
        return {"reasoningContent": {"redactedContent": redacted}}
    text: JsonObject = {"text": str(content.get("text", ""))}
    if isinstance(content.get("signature"), str):
        text["signature"] = content["signature"]
    return {"reasoningContent": {"reasoningText": text}}


def _langchain_reasoning_content(item: Mapping[str, Any]) -> dict[str, Any]:
    """Converse's reasoningContent block as langchain-aws's reasoning_content block."""
    content = item.get("reasoningContent")
    content = content if isinstance(content, Mapping) else {}
    if "redactedContent" in content:
        return {"type": "reasoning_content", "reasoning_content": {"redacted_content": content["redactedContent"]}}
    text = content.get("reasoningText")
    text = text if isinstance(text, Mapping) else {}
    return {"type": "reasoning_content", "reasoning_content": dict(text)}
