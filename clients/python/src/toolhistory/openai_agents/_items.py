"""Reading the SDK's items and responses: calls, outputs, tokens, the final output, a failure."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import cast

import pydantic_core
from agents import (
    ItemHelpers,
    ModelResponse,
    MultiProvider,
    OpenAIChatCompletionsModel,
    OpenAIProvider,
    OpenAIResponsesModel,
    ToolApprovalItem,
    ToolCallOutputItem,
)
from agents.testing import ScriptedModel
from pydantic import BaseModel

from toolhistory._recording import RecordedResponse, ResponseReasoning, aborted_failure
from toolhistory.events import JsonObject, JsonValue, RunFailure, TokenUsage
from toolhistory.limits import MAX_JSON_DEPTH, json_depth, token_count


def usage_of(response: ModelResponse, model: str | None = None) -> TokenUsage:
    """One model call's tokens (``ModelResponse`` carries no model name: give it as ``model``)."""
    return TokenUsage(
        input_tokens=token_count(response.usage.input_tokens),
        output_tokens=token_count(response.usage.output_tokens),
        model=model or None,
    )


OPENAI_PROVIDER = "openai"
"""The provider the SDK's OpenAI models' reasoning items are recorded through: they go back only to OpenAI's
Responses API."""
# The hosts whose models are OpenAI's own (an OpenAI model class pointed elsewhere serves another provider's model).
_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")


def provider_of_model(model: object, model_provider: object = None) -> str | None:
    """The provider whose items a model's responses carry, as the contract names it: ``openai`` for the SDK's OpenAI
    models (a model name without a prefix or with ``openai/`` under the default ``MultiProvider`` or an
    ``OpenAIProvider``; ``OpenAIResponsesModel`` and ``OpenAIChatCompletionsModel`` on OpenAI's own API; the SDK's
    ``ScriptedModel``, which stands in for them); ``None`` for any other (a LiteLLM model, another provider,
    an OpenAI-compatible endpoint elsewhere), whose items are not OpenAI's and whose provider it cannot tell."""
    if model is None or isinstance(model, str):
        if model_provider is None or isinstance(model_provider, MultiProvider):
            name = model or ""
            return OPENAI_PROVIDER if "/" not in name or name.startswith("openai/") else None
        return OPENAI_PROVIDER if isinstance(model_provider, OpenAIProvider) else None
    if isinstance(model, ScriptedModel):
        return OPENAI_PROVIDER
    if isinstance(model, (OpenAIResponsesModel, OpenAIChatCompletionsModel)):
        host = getattr(getattr(getattr(model, "_client", None), "base_url", None), "host", None)
        if not isinstance(host, str) or host == _OPENAI_HOSTS[0] or host.endswith(_OPENAI_HOSTS[1]):
            return OPENAI_PROVIDER
    return None


def response_of(
    response: ModelResponse, model: str | None, provider: str | None = OPENAI_PROVIDER
) -> RecordedResponse | None:
    """What a model response that asked for tools records beside its calls: its ``reasoning`` items (as the SDK would
    send them back in the same turn, ``encrypted_content`` and ids included) before the calls, each call's own item
    id (``fc_...``) and the text it said beside them, through ``provider``. ``None`` when it has neither reasoning
    nor text, or when its model or provider is unknown (reasoning goes back only to the provider and model that
    produced it: none is better than one sent to the wrong provider)."""
    items = [reasoning_input_item(item) for item in response.output if field_of(item, "type") == "reasoning"]
    texts = [text for text in map(ItemHelpers.extract_text, response.output) if text]
    if not model or not provider or (not items and not texts):
        return None
    item_ids: dict[str, str] = {}
    for item in response.output:
        call, item_id = function_call_of(item), field_of(item, "id")
        if call is not None and isinstance(item_id, str) and item_id:
            item_ids[call[0]] = item_id
    reasoning = ResponseReasoning(provider, model, tuple(items), call_item_ids=item_ids)
    return RecordedResponse(reasoning, "".join(texts) or None)


def reasoning_input_item(item: object) -> JsonObject:
    """A reasoning output item as the SDK replays it as input (the fields the provider set, in its order)."""
    if isinstance(item, BaseModel):
        return cast("JsonObject", item.model_dump(mode="json", exclude_unset=True))
    return cast("JsonObject", plain(dict(item) if isinstance(item, Mapping) else item))


def tool_result_of(output: ToolCallOutputItem) -> JsonValue:
    """The result to record for a call's output.

    What the tool returned when it is JSON (a dict, list or number) the SDK sent the model as its
    ``str()`` (so the policy's JSON paths apply); else the text the model was sent; an output that is
    not text (an image, a file, several parts) as its JSON text.
    """
    text = output_text(output.raw_item)
    if text is None:
        sent = output.raw_item.get("output") if isinstance(output.raw_item, Mapping) else None
        return json.dumps(plain(sent), ensure_ascii=False)
    return result_value(output.output, text)


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
    """The ``RunFailed`` error for what a run raised: ``aborted`` for a cancelled run, else its class name and
    message."""
    aborted = aborted_failure(error)
    if aborted is not None:
        return aborted
    message = str(error) or type(error).__name__
    return RunFailure(code=type(error).__name__[:256], message=message)


def field_of(item: object, name: str) -> object:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def function_call_of(item: object) -> tuple[str, str, str] | None:
    """``(call_id, name, arguments)`` of a function call output item."""
    if field_of(item, "type") != "function_call":
        return None
    call_id, name, arguments = field_of(item, "call_id"), field_of(item, "name"), field_of(item, "arguments")
    if not isinstance(call_id, str) or not isinstance(name, str):
        return None
    return call_id, name, arguments if isinstance(arguments, str) else ""


def function_output_call_id(raw: object) -> str | None:
    if field_of(raw, "type") != "function_call_output":
        return None
    call_id = field_of(raw, "call_id")
    return call_id if isinstance(call_id, str) else None


def approval_tool_name(approval: ToolApprovalItem, call_name: str) -> str:
    """The name the SDK keys the call's approval by."""
    return approval.tool_name if isinstance(approval.tool_name, str) and approval.tool_name else call_name


def output_text(raw: object) -> str | None:
    """The text the model was sent for an output, when it was text."""
    sent = field_of(raw, "output")
    if isinstance(sent, str):
        return sent
    parts = sent if isinstance(sent, list) else [sent]
    if len(parts) == 1 and field_of(parts[0], "type") in ("input_text", "text"):
        text = field_of(parts[0], "text")
        return text if isinstance(text, str) else None
    return None


def result_value(returned: object, text: str) -> JsonValue:
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


def plain(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
