"""Replay: the service's ``openai-responses`` history as ``Runner.run`` input items."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from toolhistory.openai_agents._items import plain

if TYPE_CHECKING:
    from agents import TResponseInputItem

    from toolhistory.replay import ReplayedTurn, ReplayHistory


def history_input(
    history: ReplayHistory | Sequence[ReplayedTurn] | Sequence[Mapping[str, Any]],
) -> list[TResponseInputItem]:
    """The replayed rounds as ``Runner.run`` input items, every turn in order.

    ``history`` is a ``ReplayHistory`` fetched with ``format="openai-responses"``, its turns, or the
    items of one turn. Each round's ``reasoning`` items (as the model produced them, ``encrypted_content``
    included) come first, then its text as an assistant message, then its ``function_call`` items
    (``call_id``, ``name``, ``arguments``, and the call's own ``fc_`` item ``id`` when its reasoning came
    back with it), then the ``function_call_output`` items (an error's text starts with ``[error] ``):
    what the SDK and the Responses API take as input, so the next request of the same turn carries the
    reasoning where the API wants it. Anything else is refused: ask for the ``openai-responses`` format.
    Append the new user message after it (``history_input(h) + [{"role": "user", "content": "..."}]``);
    to place each turn among your own items, use ``toolhistory.splice.splice_history``.
    """
    items: list[TResponseInputItem] = []
    for at, item in enumerate(_replayed_items(history)):
        if not isinstance(item, Mapping):
            raise TypeError(f"replayed item {at} is not an OpenAI Responses item ({item!r:.120}): {_FORMAT_HINT}")
        input_item = _input_item_of(item)
        if input_item is None:
            shown = json.dumps(plain(item), ensure_ascii=False)[:120]
            raise TypeError(
                f"replayed item {at} is not an OpenAI Responses reasoning, message, function_call or "
                f"function_call_output item ({shown}): {_FORMAT_HINT}"
            )
        items.append(input_item)
    return items


def _input_item_of(item: Mapping[str, Any]) -> TResponseInputItem | None:
    kind = item.get("type")
    if kind == "reasoning" and isinstance(item.get("id"), str) and isinstance(item.get("summary"), list):
        # As the model produced it: its encrypted_content is opaque, and only the same model reads it.
        return cast("TResponseInputItem", dict(item))
    if kind == "message" and item.get("role") == "assistant" and isinstance(item.get("content"), str):
        return cast("TResponseInputItem", {"type": "message", "role": "assistant", "content": item["content"]})
    if kind == "function_call" and all(isinstance(item.get(key), str) for key in ("call_id", "name", "arguments")):
        item_id = item.get("id")
        return cast(
            "TResponseInputItem",
            {
                "type": "function_call",
                # The service gives the fc_ id only right after its reasoning item: the API refuses it alone.
                **({"id": item_id} if isinstance(item_id, str) and item_id else {}),
                "call_id": item["call_id"],
                "name": item["name"],
                "arguments": item["arguments"],
            },
        )
    if kind == "function_call_output" and all(isinstance(item.get(key), str) for key in ("call_id", "output")):
        return cast(
            "TResponseInputItem", {"type": "function_call_output", "call_id": item["call_id"], "output": item["output"]}
        )
    return None


_FORMAT_HINT = 'replay the history with format="openai-responses"'


def _replayed_items(history: object) -> list[object]:
    turns = getattr(history, "turns", None)
    if turns is not None:
        format = getattr(history, "format", None)
        if isinstance(format, str) and format != "openai-responses":
            raise ValueError(
                f"history_input takes a history in the openai-responses format, not {format!r}: {_FORMAT_HINT}"
            )
        return [message for turn in turns for message in turn.messages]
    if isinstance(history, Sequence) and not isinstance(history, (str, bytes)):
        if all(hasattr(entry, "messages") for entry in history):
            return [message for turn in history for message in turn.messages]
        return list(history)
    raise TypeError(f"history_input takes a ReplayHistory, its turns or replayed items, not {type(history).__name__}")
