"""Where a resumed call goes: a run that resumes after a person's answer records the answer and the call's result
under the round and sequence the call had in the run that asked, so every run names the call alike."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from toolhistory._recording._records import RecordedCall

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from toolhistory.events import JsonObject

M = TypeVar("M")

PlacedBy = Literal["approval-id", "pending-approvals", "messages"]
"""How a resumed call's place was found."""


class PendingApproval(Protocol):
    """A call awaiting approval as the replay lists it (``ReplayHistory.pending_approvals`` or the proto's)."""

    @property
    def tool_call_id(self) -> str: ...
    @property
    def round_index(self) -> int: ...
    @property
    def sequence_index(self) -> int: ...


@dataclass(frozen=True)
class CallPosition:
    """Where a call sits in the run that made it."""

    round_index: int
    sequence_index: int


@dataclass(frozen=True)
class PlacedCall:
    """Where a call sits by the messages alone: round, sequence, tool, and how many calls its round has."""

    round_index: int
    sequence_index: int
    tool_name: str
    calls_in_round: int


def resumed_call_position(
    tool_call_id: str,
    *,
    from_id: CallPosition | None = None,
    pending_approvals: Sequence[PendingApproval] = (),
    from_messages: CallPosition | PlacedCall | None = None,
) -> tuple[CallPosition, PlacedBy] | None:
    """The place resumed call ``tool_call_id`` had in the run that asked, and what it was found from, best first: an
    id of this package's own that carries it, the latest entry of its id in the replay's ``pending_approvals``
    (listed oldest first), its place in the framework's messages (when the adapter trusts it); ``None`` when nothing
    says it."""
    if from_id is not None:
        return CallPosition(from_id.round_index, from_id.sequence_index), "approval-id"
    listed = next((pending for pending in reversed(pending_approvals) if pending.tool_call_id == tool_call_id), None)
    if listed is not None:
        return CallPosition(listed.round_index, listed.sequence_index), "pending-approvals"
    if from_messages is not None:
        return CallPosition(from_messages.round_index, from_messages.sequence_index), "messages"
    return None


def call_position_in_messages(
    messages: Sequence[M],
    tool_call_id: str,
    *,
    calls_of: Callable[[M], Sequence[tuple[str | None, str]]],
    starts_run: Callable[[M], bool],
) -> PlacedCall | None:
    """Where the model's call ``tool_call_id`` sits by a run's messages: its index among the calls of its message
    (``calls_of``: each call's ``(id, tool name)``; the latest such message, should an id repeat), and the count of
    earlier messages with calls since its run began (``starts_run``: a run starts right after that message). Right
    when the messages hold the asking run as the framework returned it."""
    for at in range(len(messages) - 1, -1, -1):
        calls = calls_of(messages[at])
        sequence_index = next((i for i, (call_id, _) in enumerate(calls) if call_id == tool_call_id), None)
        if sequence_index is None:
            continue
        round_index = 0
        for earlier in reversed(messages[:at]):
            if starts_run(earlier):
                break
            if calls_of(earlier):
                round_index += 1
        return PlacedCall(round_index, sequence_index, calls[sequence_index][1], len(calls))
    return None


class ListedApproval(PendingApproval, Protocol):
    """A call awaiting approval as the replay lists it, with its run, tool and arguments."""

    @property
    def run_id(self) -> str: ...
    @property
    def tool_name(self) -> str: ...
    @property
    def arguments_json(self) -> str: ...


class _RoundIndex(Protocol):
    @property
    def round_index(self) -> int: ...


class _ReplayedRun(Protocol):
    @property
    def run_id(self) -> str: ...
    @property
    def rounds(self) -> Sequence[_RoundIndex]: ...


@dataclass(frozen=True)
class WaitingRun:
    """A run that stopped for a person's approval, as the replay lists it: its calls that wait, each at the place it
    had in the run, and the round the run goes on with (after every round of it the replay knows)."""

    calls: tuple[RecordedCall, ...]
    next_round_index: int


def waiting_run(
    run_id: str, pending_approvals: Sequence[ListedApproval], turns: Sequence[_ReplayedRun] = ()
) -> WaitingRun | None:
    """Run ``run_id`` as the replay's ``pending_approvals`` (and ``turns``) list it, for a process that resumes it
    without having seen it ask; ``None`` when none of its calls waits."""
    waiting = [pending for pending in pending_approvals if pending.run_id == run_id]
    if not waiting:
        return None
    rounds = [r.round_index for turn in turns if turn.run_id == run_id for r in turn.rounds]
    calls = tuple(
        RecordedCall(p.round_index, p.sequence_index, p.tool_call_id, p.tool_name, _listed_arguments(p.arguments_json))
        for p in waiting
    )
    return WaitingRun(calls, max([p.round_index for p in waiting] + rounds) + 1)


def _listed_arguments(text: str) -> JsonObject:
    """The replay's arguments (a JSON object, ``{}`` when the policy kept none); anything else as ``{"_raw": text}``."""
    try:
        parsed = json.loads(text or "{}")
    except ValueError:
        parsed = None
    return parsed if isinstance(parsed, dict) else {"_raw": text}
