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
    """The replayed calls and outputs as ``Runner.run`` input items, every turn in order.

    ``history`` is a ``ReplayHistory`` fetched with ``format="openai-responses"``, its turns, or the
    items of one turn. Each ``function_call`` item (``call_id``, ``name``, ``arguments``; no item
    ``id``) and ``function_call_output`` item (an error's text starts with ``[error] ``) is what the
    SDK and the Responses API take as input. Anything else is refused: ask for the
    ``openai-responses`` format. Append the new user message after it
    (``history_input(h) + [{"role": "user", "content": "..."}]``); to place each turn among your own
    items, use ``toolhistory.splice.splice_history``.
    """
    items: list[TResponseInputItem] = []
    for at, item in enumerate(_replayed_items(history)):
        if not isinstance(item, Mapping):
            raise TypeError(f"replayed item {at} is not an OpenAI Responses item ({item!r:.120}): {_FORMAT_HINT}")
        kind = item.get("type")
        if kind == "function_call" and all(isinstance(item.get(key), str) for key in ("call_id", "name", "arguments")):
            items.append(
                cast(
                    "TResponseInputItem",
                    {
                        "type": "function_call",
                        "call_id": item["call_id"],
                        "name": item["name"],
                        "arguments": item["arguments"],
                    },
                )
            )
        elif kind == "function_call_output" and all(isinstance(item.get(key), str) for key in ("call_id", "output")):
            items.append(
                cast(
                    "TResponseInputItem",
                    {"type": "function_call_output", "call_id": item["call_id"], "output": item["output"]},
                )
            )
        else:
            shown = json.dumps(plain(item), ensure_ascii=False)[:120]
            raise TypeError(
                f"replayed item {at} is not an OpenAI Responses function_call or function_call_output item "
                f"({shown}): {_FORMAT_HINT}"
            )
    return items


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
