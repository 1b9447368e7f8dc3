"""What a framework hands over, made to fit the contract's bounds, so that a long run or a long text never fails the
turn. (Payloads over the event size are cut by the publisher itself: see toolhistory.truncation.)"""

from __future__ import annotations

import asyncio

from toolhistory.events import RunFailure
from toolhistory.limits import MAX_ID_LENGTH, bounded_usage, token_count

__all__ = [
    "ABORTED",
    "MAX_APPROVAL_REASON_LENGTH",
    "MAX_FAILURE_MESSAGE_LENGTH",
    "aborted_failure",
    "bounded_usage",
    "fitted_failure",
    "fitted_reason",
    "token_count",
]

MAX_FAILURE_MESSAGE_LENGTH = 4_000
"""The longest failure message an adapter records: provider errors may quote whole response bodies."""

MAX_APPROVAL_REASON_LENGTH = 4_000
"""An approval's reason longer than this is cut: it is for a person to read, not a payload."""


ABORTED = "aborted"
"""RunFailed's code for a run its host cancelled, in every adapter of both client languages that sees the
cancellation (a session store's adapter learns only at the next invocation that a run never answered:
``interrupted``)."""


def aborted_failure(error: BaseException) -> RunFailure | None:
    """RunFailed's error for a run its host cancelled (``asyncio.CancelledError``): ``aborted``, whatever the
    framework; ``None`` for any other error, which the adapter describes its own way."""
    if not isinstance(error, asyncio.CancelledError):
        return None
    return fitted_failure(ABORTED, str(error) or "the run was cancelled before it completed")


def fitted_failure(code: str, message: str) -> RunFailure:
    """A failure whose code is an id (at most MAX_ID_LENGTH) and whose message is at most MAX_FAILURE_MESSAGE_LENGTH."""
    return RunFailure(code=code[:MAX_ID_LENGTH], message=message[:MAX_FAILURE_MESSAGE_LENGTH])


def fitted_reason(reason: str) -> str:
    """An approval's reason as recorded: cut to MAX_APPROVAL_REASON_LENGTH."""
    return reason[:MAX_APPROVAL_REASON_LENGTH]
