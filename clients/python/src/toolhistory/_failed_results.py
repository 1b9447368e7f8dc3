"""Which failed results a replay gives back as the framework sent them: one rule for every adapter that replaces the
format's failure text with its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from collections.abc import Iterable


def failed_results_as_recorded(rounds: Iterable[toolhistory_pb2.Round]) -> dict[str, str]:
    """Tool call id to the recorded text of each failed call whose result the service gave back as recorded: a result
    it replaced (an expiry, an invalidation, an interrupted side effect, a denial) says why, and stays as replayed."""
    return {
        call.tool_call_id: call.result
        for round_ in rounds
        for call in round_.calls
        if call.is_error
        and not call.expired
        and not call.invalidated_by
        and not call.interrupted
        and call.approval != toolhistory_pb2.APPROVAL_STATUS_DENIED
    }
