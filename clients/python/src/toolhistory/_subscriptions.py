"""Subscriptions: where one is (the position to resume after), and the events it delivers, parsed."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import grpc

from toolhistory._requests import UINT64_MAX, datetime_of, text_argument, whole_argument
from toolhistory.errors import ToolHistoryError
from toolhistory.v1 import toolhistory_pb2

# -- Subscriptions.


@dataclass(frozen=True)
class SubscribedEvent:
    """A recorded event as the subscription delivers it, with its payload parsed.

    Attributes:
        position: the event's global position: pass the last one processed as ``from_position`` to resume.
        event_id, type, tenant_id, conversation_id, run_id: what the event is.
        occurred_at: when it happened, as the producer said; recorded_at: when the service recorded it.
        stream_position: its position within the conversation, from 1.
        event: the whole event as recorded (redacted), in the contract's current schema version.
        raw: the ``toolhistory_pb2.RecordedEvent`` as the service sent it.
    """

    position: int
    event_id: str
    type: str
    tenant_id: str
    conversation_id: str
    run_id: str
    occurred_at: datetime | None
    recorded_at: datetime | None
    stream_position: int
    event: dict[str, Any]
    raw: toolhistory_pb2.RecordedEvent


def subscribed_event_of(recorded: toolhistory_pb2.RecordedEvent) -> SubscribedEvent:
    """A RecordedEvent with its payload parsed and its times as datetimes."""
    return SubscribedEvent(
        position=recorded.position,
        event_id=recorded.event_id,
        type=recorded.type,
        tenant_id=recorded.tenant_id,
        conversation_id=recorded.conversation_id,
        run_id=recorded.run_id,
        occurred_at=datetime_of(recorded.occurred_at) if recorded.HasField("occurred_at") else None,
        recorded_at=datetime_of(recorded.recorded_at) if recorded.HasField("recorded_at") else None,
        stream_position=recorded.stream_position,
        event=json.loads(recorded.payload_json) if recorded.payload_json else {},
        raw=recorded,
    )


def reconnect_delay(failures: int) -> float:
    """Seconds before reconnecting after ``failures`` failed attempts in a row: 0.1 s doubling, at most 5 s, with
    jitter (half to all of it) so many consumers do not come back at once."""
    ceiling = min(5.0, 0.1 * 2.0 ** min(failures, 16))
    return ceiling / 2 + random.random() * (ceiling / 2)


class Subscription:
    """Where a subscription is: the position to resume after, and how many reconnects failed in a row."""

    def __init__(self, *, tenant_id: str, from_position: int, types: Sequence[str] | None, reconnect: bool) -> None:
        self.tenant_id = text_argument("tenant_id", tenant_id)
        self.position = whole_argument("from_position", from_position, 0, UINT64_MAX, "positions")
        if isinstance(types, str):
            raise ValueError(f"types: {types!r} is one string, not a sequence of event types")
        self.types = [text_argument("types", event_type) for event_type in types or ()]
        self.reconnect = reconnect
        self._failures = 0

    def request(self) -> toolhistory_pb2.SubscribeToolEventsRequest:
        """The request that resumes after the last position delivered."""
        return toolhistory_pb2.SubscribeToolEventsRequest(
            tenant_id=self.tenant_id, from_position=self.position, types=self.types
        )

    def delivered(self, recorded: toolhistory_pb2.RecordedEvent) -> SubscribedEvent:
        """Notes an event as delivered (the stream works again) and returns it parsed."""
        event = subscribed_event_of(recorded)
        self.position = recorded.position
        self._failures = 0
        return event

    def retry_after(self, error: ToolHistoryError) -> float | None:
        """Seconds to wait before opening the stream again, or ``None`` when the error ends the subscription."""
        # Only UNAVAILABLE: RESOURCE_EXHAUSTED is the tenant's subscription limit, which a reconnect would not lift.
        if not (self.reconnect and error.code == grpc.StatusCode.UNAVAILABLE):
            return None
        delay = reconnect_delay(self._failures)
        self._failures += 1
        return delay


SUBSCRIBE = "SubscribeToolEvents"
WATCH = "WatchConversation"
