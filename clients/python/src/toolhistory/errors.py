"""The errors the package raises: a refused event, a failed hook, a failed delivery, a failed ToolHistory call.

All of them are ``ToolHistoryClientError``s, each with ``retriable``: whether the same call may pass when tried
again, taken from one table (``toolhistory._retriable``) by gRPC status or publication code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import grpc

from toolhistory._retriable import is_retriable

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "RETRY_PUSHBACK_KEY",
    "InvalidToolEventError",
    "PersistHookError",
    "PublishError",
    "ToolHistoryClientError",
    "ToolHistoryError",
    "from_rpc_error",
    "pushback_of",
]


class ToolHistoryClientError(Exception):
    """Anything the package raises of its own. ``retriable``: whether the same call may pass when tried again."""

    retriable: bool = False


class InvalidToolEventError(ToolHistoryClientError, ValueError):
    """An event the contract refuses, caught before it is sent (the service would dead-letter it). Never retriable.

    `problems` names each field and the rule it breaks; nothing of the event (or of its batch) was sent.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems: list[str] = list(problems)
        super().__init__(f"invalid tool event: {'; '.join(self.problems)}")


class PersistHookError(ToolHistoryClientError):
    """A publisher's persist hook raised: nothing of the batch was sent. Never retriable.

    Names the tool and the payload (`kind`: "arguments" or "result"); the hook's exception is `__cause__`, kept out
    of the message since it may quote the payload it was hiding.
    """

    def __init__(self, tool_name: str, kind: str) -> None:
        self.tool_name = tool_name
        self.kind = kind
        super().__init__(f"persist hook of {tool_name} failed on its {kind}; nothing was published")


class PublishError(ToolHistoryClientError):
    """The broker did not acknowledge an event.

    `code` names the failure (librdkafka's name of it, or the publisher's own: ``PUBLISHER_CLOSED``,
    ``DELIVERY_REPORT_MISSING``, ``EVENTS_WAITING``); `retriable` says whether publishing the same step again may pass
    (the broker or the network was briefly unable), from the package's table by `code` unless given. A retried step
    keeps its derived event id, so one that did reach the broker is recorded once. `reason` says what failed.
    """

    def __init__(self, reason: str, *, code: str = "UNKNOWN", retriable: bool | None = None) -> None:
        self.reason = reason
        self.code = code
        self.retriable = is_retriable(code) if retriable is None else retriable
        super().__init__(f"publishing failed{' (retriable)' if self.retriable else ''}: {reason}")


class ToolHistoryError(ToolHistoryClientError):
    """A failed ToolHistory call: the gRPC status (code and name), the service's message, and whether a retry may pass.

    Attributes:
        code: the gRPC status code.
        status: its name, e.g. ``"UNAUTHENTICATED"``.
        details: the service's message.
        method: the RPC that failed, e.g. ``"GetReplayHistory"``.
        retriable: ``True`` for UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED and ABORTED.
        retry_after_ms: when the service refused the call as busy, the milliseconds it asked the caller to wait
            (its ``grpc-retry-pushback-ms``); ``None`` otherwise.
    """

    def __init__(self, code: grpc.StatusCode, details: str, method: str, retry_after_ms: int | None = None) -> None:
        self.code = code
        self.status: str = code.name
        self.details = details
        self.method = method
        self.retriable = is_retriable(code.name)
        self.retry_after_ms = retry_after_ms
        super().__init__(f"{method}: {self.status}: {details}")


RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""The trailer in which the service says when to try again (gRPC's retry pushback)."""


def pushback_of(trailers: object) -> int | None:
    """The pushback in a call's trailing metadata (grpc's tuple of items, or grpc.aio's Metadata of pairs): whole
    milliseconds, 0 or more; ``None`` when absent or malformed (then the call is not retried)."""
    if trailers is None or isinstance(trailers, (str, bytes)) or not isinstance(trailers, Iterable):
        return None
    for item in trailers:
        key, value = getattr(item, "key", None), getattr(item, "value", None)
        if key is None and isinstance(item, tuple) and len(item) == 2:
            key, value = item
        if key == RETRY_PUSHBACK_KEY and isinstance(value, str) and value.isdigit() and len(value) <= 9:
            return int(value)
    return None


def from_rpc_error(method: str, error: grpc.RpcError) -> ToolHistoryError:
    """The ToolHistoryError of a failed call (raise it ``from error`` to keep the cause)."""
    code = error.code() if callable(getattr(error, "code", None)) else None
    details = error.details() if callable(getattr(error, "details", None)) else None
    trailers = error.trailing_metadata() if callable(getattr(error, "trailing_metadata", None)) else None
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    return ToolHistoryError(code, details or str(error), method, retry_after_ms=pushback_of(trailers))
