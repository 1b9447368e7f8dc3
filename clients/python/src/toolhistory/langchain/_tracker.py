"""The calls of one agent run as LangChain's callbacks reveal them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolhistory._recording import PendingApproval, RecordedCall, resumed_call_position
from toolhistory.langchain._approvals import call_position_in
from toolhistory.langchain._payloads import canonical_json

if TYPE_CHECKING:
    from collections.abc import Sequence

    from langchain_core.messages import BaseMessage


@dataclass
class TrackedCall:
    """A call the model asked for (or an earlier run's call this run resumes), and how far it got."""

    call: RecordedCall
    arguments_json: str
    """The arguments as canonical JSON: matches a tool run to a call the model gave no id."""
    claimed: bool = False
    """A tool run is executing it: its end or error is the result."""
    answered: bool = False
    awaiting_approval: bool = False
    """The tool interrupted: the run that resumes it may record the decision."""
    interrupt_id: str | None = None
    """The interrupt's id, which picks its resume value."""


class CallTracker:
    """The calls of one agent run: a tool run names its call by id, or (when the model gave none) by tool name and
    arguments; a resumed graph runs a tool again for a call of an earlier run."""

    def __init__(self, pending_approvals: Sequence[PendingApproval] | None) -> None:
        self._pending_approvals = None if pending_approvals is None else list(pending_approvals)
        self._calls: list[TrackedCall] = []

    def track(self, calls: Sequence[RecordedCall]) -> None:
        """A round's calls, as the model asked for them."""
        self._calls.extend(TrackedCall(call, canonical_json(call.arguments)) for call in calls)

    def pending(
        self, tool_call_id: str | None, tool_name: str | None, include_claimed: bool, arguments_json: str | None = None
    ) -> TrackedCall | None:
        """The unanswered call a tool run or ToolMessage belongs to: by tool call id; without one (the model gave
        none), by tool name and arguments, else by name: the first in call order of the latest round that has one.
        Claimed calls only when ``include_claimed``."""
        open_calls = [c for c in self._calls if not c.answered and (include_claimed or not c.claimed)]
        if tool_call_id:
            return _latest_round_first([c for c in open_calls if c.call.tool_call_id == tool_call_id])
        if tool_name is None:
            return None
        named = [c for c in open_calls if c.call.tool_name == tool_name]
        matching = [c for c in named if c.arguments_json == arguments_json]
        return _latest_round_first(matching) or _latest_round_first(named)

    def resumed(self, tool_call_id: str | None, state_messages: Sequence[BaseMessage]) -> TrackedCall | None:
        """A tool the resumed graph runs again for a call of an earlier run (one this handler did not see asked for).

        Placed by ``pending_approvals``, else by the agent's messages. LangGraph runs the whole tool node again, so
        the other calls of an interrupted round may run again too: without ``pending_approvals`` a call is taken as
        the one that waited only when it is its round's one call (which of several interrupted, the callbacks do not
        tell); the others' first results are in the run that first ran them.
        """
        if not tool_call_id or any(c.call.tool_call_id == tool_call_id for c in self._calls):
            return None
        placed = call_position_in(state_messages, tool_call_id)
        if self._pending_approvals is None:
            found = resumed_call_position(
                tool_call_id, from_messages=placed if placed and placed.calls_in_round == 1 else None
            )
        else:
            found = resumed_call_position(tool_call_id, pending_approvals=self._pending_approvals)
        if found is None:
            return None
        position, _ = found
        call = RecordedCall(
            position.round_index, position.sequence_index, tool_call_id, placed.tool_name if placed else ""
        )
        tracked = TrackedCall(call, "", awaiting_approval=True)
        self._calls.append(tracked)
        return tracked

    def release_all(self) -> None:
        """The run paused: no tool run holds a call any more."""
        for tracked in self._calls:
            tracked.claimed = False


def _latest_round_first(calls: Sequence[TrackedCall]) -> TrackedCall | None:
    """The first (in call order) of the calls of the latest round among ``calls``."""
    if not calls:
        return None
    latest = calls[-1].call.round_index
    return next(c for c in calls if c.call.round_index == latest)
