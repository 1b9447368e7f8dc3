"""The typed result of GetReplayHistory.

Each turn's provider messages are parsed from the response's ``messages_json``;
everything else the service says (rounds, omissions, pending approvals) stays
the generated proto messages, as every other RPC of the clients returns them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolhistory.formats import HistoryFormat
    from toolhistory.v1 import toolhistory_pb2

GEMINI_PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"
"""Google's documented stand-in for a thought signature that a function call of the current turn lacks: a replayed
round marked ``reasoning_placeholder`` gets it on its first call, and an adapter never records it as a signature."""


@dataclass(frozen=True)
class ReplayedTurn:
    """One replayed run.

    Attributes:
        run_id: the run.
        assistant_message_id: the host's final assistant message of the run; empty unless it completed.
        after_message_id: the host's message that started the run; empty when the producer gave none.
        status: the run's status (``toolhistory_pb2.RUN_STATUS_COMPLETED``, ...).
        messages: this turn's tool segment in the requested format, parsed (see ``toolhistory.formats``
            for their shapes); empty with ``view="structured"``.
        rounds: the structured rounds (``toolhistory_pb2.Round``); empty with ``view="messages"``. Each carries the
            model response recorded for it (``provider``, ``model``, ``text``), the reasoning replayed with it
            (``reasoning_json``, ``call_signatures``, ``call_item_ids``), why a recorded round's reasoning was left
            out (``reasoning_omitted``, a ``toolhistory_pb2.ReasoningOmission``) and whether a Gemini call got the
            placeholder signature (``reasoning_placeholder``).
        raw: the turn as the service sent it.
    """

    run_id: str
    assistant_message_id: str
    after_message_id: str
    status: toolhistory_pb2.RunStatus.ValueType
    messages: list[Any]
    rounds: list[toolhistory_pb2.Round]
    raw: toolhistory_pb2.Turn


@dataclass(frozen=True)
class ReplayHistory:
    """The tool-call history a model may see again, in one format, with every omission explained.

    Attributes:
        format: the format of every turn's messages.
        turns: the replayed runs, in order.
        omitted: every call left out, and why (``toolhistory_pb2.Omission``).
        history_tokens: the tokens (o200k_base) of the tool names, arguments and results replayed.
        pending_approvals: calls waiting for a person's approval, oldest first (``toolhistory_pb2.PendingApproval``):
            left out of the turns, listed so the host can ask again.
        raw: the response as the service sent it.
    """

    format: HistoryFormat
    turns: list[ReplayedTurn]
    omitted: list[toolhistory_pb2.Omission]
    history_tokens: int
    pending_approvals: list[toolhistory_pb2.PendingApproval]
    raw: toolhistory_pb2.GetReplayHistoryResponse

    def messages(self) -> list[Any]:
        """Every turn's messages, concatenated in order: ready to pass to the provider's API."""
        return [message for turn in self.turns for message in turn.messages]


def replayed_turn_of(turn: toolhistory_pb2.Turn) -> ReplayedTurn:
    """A turn of the response, its messages parsed."""
    messages = json.loads(turn.messages_json) if turn.messages_json else []
    if not isinstance(messages, list):
        raise ValueError(f"messages_json of run {turn.run_id!r} is not a JSON array")
    return ReplayedTurn(
        run_id=turn.run_id,
        assistant_message_id=turn.assistant_message_id,
        after_message_id=turn.after_message_id,
        status=turn.status,
        messages=messages,
        rounds=list(turn.rounds),
        raw=turn,
    )


def replay_history_of(response: toolhistory_pb2.GetReplayHistoryResponse, format: HistoryFormat) -> ReplayHistory:
    """The typed result of a GetReplayHistory response asked for in ``format``."""
    return ReplayHistory(
        format=format,
        turns=[replayed_turn_of(turn) for turn in response.turns],
        omitted=list(response.omitted),
        history_tokens=response.history_tokens,
        pending_approvals=list(response.pending_approvals),
        raw=response,
    )
