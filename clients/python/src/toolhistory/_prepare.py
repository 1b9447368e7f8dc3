"""What ToolEventPublisher sends for a run's pending events: each with its envelope, checked against the contract and
cut to the limits, after the persist hooks ran on its payloads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple

from toolhistory.errors import InvalidToolEventError
from toolhistory.event_ids import derive_event_id
from toolhistory.events import (
    INVOCATION_EVENT_TYPES,
    ROUND_EVENT_TYPES,
    EventType,
    MaxResultChars,
    PublishedEvent,
    RunScope,
)
from toolhistory.persist import PersistOption, persist_option_problems, persisted_fields
from toolhistory.truncation import max_result_chars_problems, result_char_limit, serialize_fitted_event
from toolhistory.validation import DEFAULT_MAX_EVENT_BYTES, event_problems

DEFAULT_TOOL_EVENTS_TOPIC = "agent.tool-events"
PUBLISHED_SCHEMA_VERSION = 2
"""The event version this package publishes."""

# Stands in for an id that cannot be derived because the step's fields are not JSON: such an event fails the
# contract's checks, so it is never sent.
_UNDERIVABLE_EVENT_ID = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class PendingEvent:
    """An event of a run before its envelope is added: what a RunPublisher hands to its send function."""

    type: EventType
    fields: dict[str, Any]
    """The event's own fields, in the order they are sent, after the envelope's."""
    round_index: Any = None
    """The call's step, for the derived event id (None for RunCompleted and RunFailed)."""
    sequence_index: Any = None
    tool_call_id: Any = None
    event_id: str | None = None
    """The idempotency key; None: derived from the run and the step."""
    occurred_at: datetime | str | None = None
    """None: when the event is prepared."""
    tool_name: str | None = None
    """A call's or a result's tool, when known: picks the tool's `max_result_chars` and persist hook. Not sent on a
    result."""


class PreparedEvent(NamedTuple):
    """An event as it goes to the broker."""

    event_id: str
    type: EventType
    value: str
    """The event's JSON: the message value (its key is the conversationId)."""


Send = Callable[[Sequence[PendingEvent]], list[PublishedEvent]]
"""What a RunPublisher calls to publish events: all of them or none, in order, returning what was acknowledged.
A Send of the host's own sets each PublishedEvent's ``consistency_token`` (``kafka_consistency_token(topic,
partition, offset)`` of the broker's acknowledgement) for this process's reads to wait for them."""


def _javascript_iso_time(moment: datetime) -> str:
    """A zoned datetime in UTC, with milliseconds and `Z`, as JavaScript's Date.toISOString writes it."""
    utc = moment.astimezone(timezone.utc)
    return (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}"
        f".{utc.microsecond // 1000:03d}Z"
    )


def _is_naive(moment: object) -> bool:
    return isinstance(moment, datetime) and (moment.tzinfo is None or moment.utcoffset() is None)


def _derived_event_id(scope: RunScope, event: PendingEvent) -> str:
    """The event's derived id; a stand-in when its step cannot give one (it is not JSON), for the contract's checks
    to name what is wrong."""
    step: dict[str, Any] = {}
    if event.type in INVOCATION_EVENT_TYPES:
        step = {
            "round_index": event.round_index,
            "sequence_index": event.sequence_index,
            "tool_call_id": event.tool_call_id,
        }
    elif event.type in ROUND_EVENT_TYPES:
        step = {"round_index": event.round_index}
    try:
        return derive_event_id(
            tenant_id=scope.tenant_id,
            conversation_id=scope.conversation_id,
            run_id=scope.run_id,
            type=event.type,
            **step,
        )
    except (TypeError, ValueError):
        return _UNDERIVABLE_EVENT_ID


def _check_limits(max_event_bytes: object, max_result_chars: object) -> list[str]:
    problems = max_result_chars_problems(max_result_chars)
    if not (isinstance(max_event_bytes, int) and not isinstance(max_event_bytes, bool) and max_event_bytes >= 1):
        problems.insert(0, f"max_event_bytes: must be a whole number of bytes, 1 or more (got {max_event_bytes!r})")
    return problems


def prepare_events(
    scope: RunScope,
    events: Sequence[PendingEvent],
    *,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    max_result_chars: MaxResultChars | None = None,
    persist: PersistOption | None = None,
    now: datetime | None = None,
) -> list[PreparedEvent]:
    """What ToolEventPublisher sends for a run's pending events, in order: each with its envelope (the derived
    event id and `now` unless the event names its own), checked against the contract and cut to the limits, after
    the persist hooks ran on its payloads (see toolhistory.persist).

    Raises InvalidToolEventError for the first event that is invalid or cannot be made to fit (PersistHookError for
    a hook that raises), so a batch is sent whole or not at all. For a host that sends the events itself (e.g.
    through an outbox): a RunPublisher whose send function calls this.
    """
    problems = [*_check_limits(max_event_bytes, max_result_chars), *persist_option_problems(persist)]
    if problems:
        raise ValueError("; ".join(problems))
    moment = now if now is not None else datetime.now(timezone.utc)
    prepared: list[PreparedEvent] = []
    for pending in events:
        event_id = pending.event_id if pending.event_id is not None else _derived_event_id(scope, pending)
        event = _event_of(scope, pending, event_id, moment, persist)
        # A withheld result is None: there is no text to cut.
        limit = (
            result_char_limit(max_result_chars, pending.tool_name)
            if pending.type == "ToolResultReceived" and event["result"] is not None
            else None
        )
        value = serialize_fitted_event(event, max_event_bytes=max_event_bytes, max_result_chars=limit)
        if event_id == _UNDERIVABLE_EVENT_ID and pending.event_id is None:
            raise AssertionError("an event whose id could not be derived passed the contract's checks")
        prepared.append(PreparedEvent(event_id, pending.type, value))
    return prepared


def _event_of(
    scope: RunScope, pending: PendingEvent, event_id: str, moment: datetime, persist: PersistOption | None
) -> dict[str, Any]:
    """The event with its envelope, its payload as the persist hooks answered. An ``occurred_at`` without a time
    zone is ambiguous: refused (with the event's other problems) rather than guessed."""
    occurred_at: object = pending.occurred_at if pending.occurred_at is not None else moment
    naive = _is_naive(occurred_at)
    if isinstance(occurred_at, datetime) and not naive:
        occurred_at = _javascript_iso_time(occurred_at)
    event: dict[str, Any] = {
        "eventId": event_id,
        "type": pending.type,
        "schemaVersion": PUBLISHED_SCHEMA_VERSION,
        "tenantId": scope.tenant_id,
        "conversationId": scope.conversation_id,
        "channel": scope.channel,
        "runId": scope.run_id,
        "occurredAt": occurred_at,
    }
    if scope.user_message_id is not None:
        event["userMessageId"] = scope.user_message_id
    event.update(persisted_fields(pending.type, pending.fields, pending.tool_name, persist))
    if naive:
        zoned = {**event, "occurredAt": "1970-01-01T00:00:00.000Z"}
        raise InvalidToolEventError(
            [
                "occurredAt must carry a time zone (got a datetime without one): use e.g. datetime.now(timezone.utc)",
                *event_problems(zoned),
            ]
        )
    return event
