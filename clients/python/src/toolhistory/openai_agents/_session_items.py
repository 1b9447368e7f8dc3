"""The session's items as it sorts and marks them: which kind of item each is and its text, the id toolhistory knows
it by (``MESSAGE_ID_KEY``), how a saved batch splits by model response, and a replayed turn's items as the SDK sent
them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from toolhistory._failed_results import failed_results_as_recorded
from toolhistory.openai_agents._items import field_of, function_call_of, function_output_call_id

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agents import TResponseInputItem

MESSAGE_ID_KEY = "toolhistory_message_id"
"""The key under which the inner session keeps the id toolhistory knows each of its items by (the replay places the
recorded calls by these ids). ``get_items`` and ``pop_item`` return the items without it."""

_TOOL_ITEM_TYPES = frozenset({"function_call", "function_call_output"})


@dataclass(frozen=True)
class _TurnView:
    assistant_message_id: str
    after_message_id: str
    messages: list[Any]


def _outputs_as_sent(turn: Any) -> list[Any]:
    """The turn's items, a failed call's output as the SDK sent it (the format marks a failure ``[error] ``; the SDK's
    own text already says so): the recorded text, unless the service replaced it (an expiry, an invalidation, an
    interrupted side effect or a denial say why)."""
    failed = failed_results_as_recorded(turn.rounds)
    items = []
    for item in turn.messages:
        if isinstance(item, Mapping) and item.get("type") == "function_call_output" and item.get("call_id") in failed:
            item = {**item, "output": failed[item["call_id"]]}
        items.append(item)
    return items


def _rounds(items: Sequence[TResponseInputItem]) -> list[list[TResponseInputItem]]:
    """The tool items of a batch by model response: its reasoning and calls, then their outputs (a batch may hold
    several responses: a call or reasoning item after an output is the next response's)."""
    grouped: list[list[TResponseInputItem]] = []
    for item in items:
        starts = field_of(item, "type") in ("function_call", "reasoning") or _is_assistant_message(item)
        if not grouped or (starts and any(function_output_call_id(entry) is not None for entry in grouped[-1])):
            grouped.append([item])
        else:
            grouped[-1].append(item)
    return grouped


def _calls_follow(items: Sequence[TResponseInputItem], at: int) -> bool:
    """Whether the model's response the item at ``at`` belongs to asked for calls: the next item that is neither its
    reasoning nor its text is a function call."""
    for item in items[at + 1 :]:
        if field_of(item, "type") == "reasoning" or _is_assistant_message(item):
            continue
        return function_call_of(item) is not None
    return False


def _message_text(item: object) -> str:
    """An assistant message's text: its content as a string, or its output_text parts joined."""
    content = field_of(item, "content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    texts = (field_of(part, "text") for part in parts if field_of(part, "type") in ("output_text", "text"))
    return "".join(str(text or "") for text in texts)


def _is_tool_item(item: object) -> bool:
    return field_of(item, "type") in _TOOL_ITEM_TYPES


def _is_user_message(item: object) -> bool:
    return field_of(item, "role") == "user" and field_of(item, "type") in (None, "message")


def _is_assistant_message(item: object) -> bool:
    return field_of(item, "role") == "assistant" and field_of(item, "type") in (None, "message")


def _message_id_of(item: object) -> str | None:
    message_id = field_of(item, MESSAGE_ID_KEY)
    return message_id if isinstance(message_id, str) and message_id else None


def _last_user_message_id(items: Sequence[TResponseInputItem]) -> str | None:
    return next((_message_id_of(item) for item in reversed(items) if _is_user_message(item)), None)


def _without_id(item: TResponseInputItem) -> TResponseInputItem:
    if isinstance(item, Mapping) and MESSAGE_ID_KEY in item:
        return cast("TResponseInputItem", {key: value for key, value in item.items() if key != MESSAGE_ID_KEY})
    return item


def _output_text(item: object) -> str | None:
    sent = field_of(item, "output")
    return sent if isinstance(sent, str) else None


def _replayed_key(item: object) -> str:
    """A replayed item's identity in the session's view: its call id, else its own id (a reasoning item's ``rs_``),
    else its whole content (a round's text has neither), so popping one hides that item and no other."""
    kind = field_of(item, "type")
    for field in ("call_id", "id"):
        value = field_of(item, field)
        if value:
            return f"{kind}:{field}:{value}"
    plain = item.model_dump(exclude_unset=True) if hasattr(item, "model_dump") else item
    return f"{kind}:content:{json.dumps(plain, sort_keys=True, default=str)}"
