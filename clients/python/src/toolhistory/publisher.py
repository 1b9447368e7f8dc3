"""Publishing a run's tool events to Kafka, as the service's contract wants them and as the TypeScript client does.

Events are validated before they are sent, cut to the limits when a payload is too large, keyed by conversation
(Kafka's murmur2 partitioner, the Java client's and kafkajs's, so a conversation published from Python and from Node
lands on one partition), and sent by an idempotent producer with acknowledgement from all in-sync replicas, which
keeps a conversation's events in order.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from confluent_kafka import KafkaError, KafkaException, Producer

from toolhistory.consistency import kafka_consistency_token, later_consistency_token, remember_consistency_token
from toolhistory.errors import InvalidToolEventError, PublishError
from toolhistory.event_ids import derive_event_id
from toolhistory.events import (
    INVOCATION_EVENT_TYPES,
    EventType,
    JsonObject,
    JsonValue,
    MaxResultChars,
    PublishedEvent,
    RunFailure,
    RunScope,
    TokenUsage,
    ToolCall,
    ToolResult,
)
from toolhistory.limits import MAX_INDEX
from toolhistory.persist import (
    PersistOption,
    copy_persist_option,
    persist_option_problems,
    persisted_fields,
)
from toolhistory.truncation import (
    copy_max_result_chars,
    max_result_chars_problems,
    result_char_limit,
    serialize_fitted_event,
)
from toolhistory.validation import DEFAULT_MAX_EVENT_BYTES, event_problems

if TYPE_CHECKING:
    from types import TracebackType

    from confluent_kafka import Message

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_TOOL_EVENTS_TOPIC",
    "PUBLISHED_SCHEMA_VERSION",
    "PendingEvent",
    "PreparedEvent",
    "RunPublisher",
    "Send",
    "ToolEventPublisher",
    "prepare_events",
]

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
            # A datetime without a zone is ambiguous: refused (with the event's other problems) rather than guessed.
            zoned = {**event, "occurredAt": "1970-01-01T00:00:00.000Z"}
            raise InvalidToolEventError(
                [
                    "occurredAt must carry a time zone (got a datetime without one): use e.g. "
                    "datetime.now(timezone.utc)",
                    *event_problems(zoned),
                ]
            )
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


def _check_scope(scope: RunScope) -> None:
    """The run's ids must be non-empty strings (user_message_id when given): raises naming each one that is not."""
    problems: list[str] = []
    wrong_type = False
    for name in ("tenant_id", "conversation_id", "channel", "run_id"):
        value = getattr(scope, name)
        if value is None or value == "":
            problems.append(f"{name} is required")
        elif not isinstance(value, str):
            wrong_type = True
            problems.append(f"{name}: must be a non-empty string (got {type(value).__name__})")
    user_message_id = scope.user_message_id
    if user_message_id is not None and (not isinstance(user_message_id, str) or user_message_id == ""):
        wrong_type = wrong_type or not isinstance(user_message_id, str)
        problems.append(
            "user_message_id: must be a non-empty string when given "
            "(leave it out when the host has no id for the message)"
        )
    if problems:
        raise (TypeError if wrong_type else ValueError)("; ".join(problems))


def _usage_fields(usage: Sequence[TokenUsage] | None) -> dict[str, Any]:
    if usage is None:
        return {}
    entries: list[Any] = []
    for entry in usage:
        if isinstance(entry, TokenUsage):
            wire: dict[str, Any] = {"inputTokens": entry.input_tokens, "outputTokens": entry.output_tokens}
            if entry.model is not None:
                wire["model"] = entry.model
            entries.append(wire)
        else:
            entries.append(entry)  # the contract's checks name what is wrong with it
    return {"usage": entries}


_CITATION = re.compile(r"\[source(\d+)\]")


def cited_sources_from(answer_text: str) -> list[int]:
    """The source numbers an answer cites, for `complete(cited_sources=...)`: every `[sourceN]` in the text (also side
    by side, as in `[source1][source2]`), sorted, once each. Other spellings (`[Source 1]`, `[source-1]`) are not
    read: a number misread would drop a source the answer needs; a number missed only keeps one it does not."""
    numbers = {int(digits) for digits in _CITATION.findall(answer_text)}
    return sorted(n for n in numbers if n <= MAX_INDEX)


def _cited_sources_fields(cited_sources: Sequence[int] | None) -> dict[str, Any]:
    return {} if cited_sources is None else {"citedSources": list(cited_sources)}


def _failure_fields(error: object) -> dict[str, Any]:
    """A run's failure as the contract's `error`: from a RunFailure, or a mapping with `code` and `message`."""
    if isinstance(error, Mapping):
        return {"code": error.get("code"), "message": error.get("message")}
    return {"code": getattr(error, "code", None), "message": getattr(error, "message", None)}


def _optional(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


class RunPublisher:
    """One run's events. Each method returns once the broker acknowledged its events.

    Each raises InvalidToolEventError (nothing was sent) or PublishError (delivery failed; `.retriable`). Blocking:
    async code calls it through `asyncio.to_thread`.

    Each PublishedEvent carries its `consistency_token`; after every publish the run remembers the last one for the
    conversation (`toolhistory.consistency`), so this process's reads of it include what was published
    (read-your-writes), and `consistency_token` is the run's last one, to carry to reads in another process.
    """

    def __init__(self, scope: RunScope, send: Send) -> None:
        """A run's publishing methods over `send`, which publishes prepared events (see prepare_events)."""
        _check_scope(scope)
        self.scope = scope
        self._send = send
        # The tool of each call published here, by step: a result's tool for the per-tool result limit.
        self._tool_names: dict[tuple[int, int, str], str] = {}
        self._consistency_token = ""
        self._token_lock = threading.Lock()

    def tool_call(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        tool_name: str,
        arguments: JsonObject,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """A call the model asked for (ToolCallRequested). `tool_call_id` may be empty."""
        call = ToolCall(round_index, sequence_index, tool_call_id, tool_name, arguments, event_id, occurred_at)
        return self._one(self._tool_call_event(call))

    def tool_calls(self, calls: Sequence[ToolCall]) -> list[PublishedEvent]:
        """A round's calls in one request, in order. Nothing is sent if one is invalid."""
        return self._published([self._tool_call_event(call) for call in calls])

    def tool_result(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        result: JsonValue,
        is_error: bool = False,
        tool_name: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """What a call gave back (ToolResultReceived). `tool_name` (not sent) picks the tool's `max_result_chars`
        and persist hook; default: the tool of the call this RunPublisher published for the step (required when
        the publisher has persist hooks and the call was published elsewhere)."""
        result_input = ToolResult(
            round_index, sequence_index, tool_call_id, result, is_error, tool_name, event_id, occurred_at
        )
        return self._one(self._tool_result_event(result_input))

    def tool_results(self, results: Sequence[ToolResult]) -> list[PublishedEvent]:
        """Several results in one request, in order. Nothing is sent if one is invalid."""
        return self._published([self._tool_result_event(result) for result in results])

    def approval_requested(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        reason: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The call waits for a person's approval (ToolApprovalRequested; publish the call first). `tool_call_id`
        must not be empty; `reason` is shown to the person."""
        return self._one(
            PendingEvent(
                type="ToolApprovalRequested",
                round_index=round_index,
                sequence_index=sequence_index,
                tool_call_id=tool_call_id,
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "toolCallId": tool_call_id,
                    "roundIndex": round_index,
                    "sequenceIndex": sequence_index,
                    **_optional(reason=reason),
                },
            )
        )

    def approval_decided(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        approved: bool,
        reason: str | None = None,
        decided_by: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The person's answer to the call of that step (ToolApprovalDecided); this run may be a later one than
        the call's."""
        return self._one(
            PendingEvent(
                type="ToolApprovalDecided",
                round_index=round_index,
                sequence_index=sequence_index,
                tool_call_id=tool_call_id,
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "toolCallId": tool_call_id,
                    "roundIndex": round_index,
                    "sequenceIndex": sequence_index,
                    "approved": approved,
                    **_optional(reason=reason, decidedBy=decided_by),
                },
            )
        )

    def complete(
        self,
        *,
        assistant_message_id: str,
        finish_reason: str = "stop",
        usage: Sequence[TokenUsage] | None = None,
        cited_sources: Sequence[int] | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The run ended with the host's final assistant message (RunCompleted). `finish_reason`: `stop` when the
        model answered after the last round's results, e.g. `tool_limit` when the loop ended right after executing
        tools. `usage`: tokens per service (LLM) call of the run, in call order. `cited_sources`: the source numbers
        the final answer cites (`cited_sources_from(answer)` reads its `[sourceN]`), `[]` when none; replay then keeps
        only the cited items of results a `citations` policy rule names. None: every result is replayed whole."""
        return self._one(
            PendingEvent(
                type="RunCompleted",
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "assistantMessageId": assistant_message_id,
                    "finishReason": finish_reason,
                    **_usage_fields(usage),
                    **_cited_sources_fields(cited_sources),
                },
            )
        )

    def fail(
        self,
        *,
        error: RunFailure,
        usage: Sequence[TokenUsage] | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The run failed (RunFailed). `usage`: the tokens of the service calls made before it failed."""
        return self._one(
            PendingEvent(
                type="RunFailed",
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "error": _failure_fields(error),
                    **_usage_fields(usage),
                },
            )
        )

    @property
    def consistency_token(self) -> str:
        """Where this run's last published event landed (``""`` before any was published): a read given it
        answers only once everything this run published is recorded. This process's reads of the conversation
        send it by themselves (``last_consistency_token``); carry it to reads made in another process."""
        return self._consistency_token

    def _one(self, event: PendingEvent) -> PublishedEvent:
        [published] = self._published([event])
        return published

    def _published(self, events: Sequence[PendingEvent]) -> list[PublishedEvent]:
        """Sends, and remembers the last token for this process's reads of the conversation."""
        published = self._send(events)
        token = published[-1].consistency_token if published else ""
        if token:
            with self._token_lock:
                self._consistency_token = later_consistency_token(self._consistency_token or None, token)
            remember_consistency_token(self.scope.tenant_id, self.scope.conversation_id, token)
        return published

    @staticmethod
    def _step_key(round_index: object, sequence_index: object, tool_call_id: object) -> tuple[int, int, str] | None:
        if (
            type(round_index) is int  # not bool: True would be the same key as 1
            and type(sequence_index) is int
            and isinstance(tool_call_id, str)
        ):
            return (round_index, sequence_index, tool_call_id)
        return None

    def _tool_call_event(self, call: ToolCall) -> PendingEvent:
        key = self._step_key(call.round_index, call.sequence_index, call.tool_call_id)
        if key is not None and isinstance(call.tool_name, str):
            self._tool_names[key] = call.tool_name
        return PendingEvent(
            type="ToolCallRequested",
            round_index=call.round_index,
            sequence_index=call.sequence_index,
            tool_call_id=call.tool_call_id,
            event_id=call.event_id,
            occurred_at=call.occurred_at,
            tool_name=call.tool_name if isinstance(call.tool_name, str) else None,
            fields={
                "roundIndex": call.round_index,
                "sequenceIndex": call.sequence_index,
                "toolCallId": call.tool_call_id,
                "toolName": call.tool_name,
                "arguments": call.arguments,
            },
        )

    def _tool_result_event(self, result: ToolResult) -> PendingEvent:
        tool_name = result.tool_name
        if tool_name is None:
            key = self._step_key(result.round_index, result.sequence_index, result.tool_call_id)
            tool_name = None if key is None else self._tool_names.get(key)
        return PendingEvent(
            type="ToolResultReceived",
            round_index=result.round_index,
            sequence_index=result.sequence_index,
            tool_call_id=result.tool_call_id,
            event_id=result.event_id,
            occurred_at=result.occurred_at,
            tool_name=tool_name,
            fields={
                "toolCallId": result.tool_call_id,
                "roundIndex": result.round_index,
                "sequenceIndex": result.sequence_index,
                "result": result.result,
                "isError": result.is_error,
            },
        )


# librdkafka settings the publisher's guarantees rest on: set from its own options, not from kafka_config.
_OWNED_SETTINGS = {
    "bootstrap.servers": "set it with brokers",
    "metadata.broker.list": "set it with brokers",
    "client.id": "set it with client_id",
    "message.timeout.ms": "set it with delivery_timeout",
    "delivery.timeout.ms": "set it with delivery_timeout",
    "enable.idempotence": "the publisher's idempotent producer keeps a conversation's events in order, once each",
    "acks": "the publisher waits for all in-sync replicas",
    "request.required.acks": "the publisher waits for all in-sync replicas",
    "partitioner": "murmur2_random puts a conversation on the partition the other clients pick",
    "delivery.report.only.error": "the publisher needs every delivery report",
    "on_delivery": "the publisher needs every delivery report",
    "dr_cb": "the publisher needs every delivery report",
    "dr_msg_cb": "the publisher needs every delivery report",
}

# Failures a later try may get past (the broker or the network was briefly unable). librdkafka does not mark its
# own timeouts retriable in delivery reports, though they are the commonest of them.
_RETRIABLE_ERRORS = frozenset(
    {
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._QUEUE_FULL,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError.UNKNOWN_TOPIC_OR_PART,
    }
)

# How much longer than delivery_timeout a method waits for librdkafka's own report of a message it timed out.
_REPORT_GRACE_SECONDS = 5.0
_POLL_INTERVAL_SECONDS = 0.1


def _is_retriable(error: KafkaError) -> bool:
    return bool(error.retriable()) or error.code() in _RETRIABLE_ERRORS


def _describe_kafka_error(error: KafkaError) -> str:
    return f"{error.str()} ({error.name()})"


@dataclass
class _Delivery:
    """The delivery reports of one batch, filled in by librdkafka's callbacks on whichever thread polls."""

    count: int
    reports: dict[int, tuple[KafkaError | None, Message | None]] = field(default_factory=dict)
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def report(self, index: int, error: KafkaError | None, message: Message | None) -> None:
        with self.lock:
            self.reports[index] = (error, message)
            if len(self.reports) == self.count:
                self.done.set()


def _option_problems(
    brokers: object,
    topic: object,
    client_id: object,
    kafka_config: object,
    max_event_bytes: object,
    max_result_chars: object,
    persist: object,
    delivery_timeout: object,
) -> list[str]:
    problems: list[str] = []
    broker_list = [brokers] if isinstance(brokers, str) else brokers
    if (
        not isinstance(broker_list, Sequence)
        or len(broker_list) == 0
        or not all(isinstance(broker, str) and broker.strip() for broker in broker_list)
    ):
        problems.append(f"brokers: at least one broker address is required, each a non-empty string (got {brokers!r})")
    if not isinstance(topic, str) or topic == "":
        problems.append(f"topic: must be a non-empty string (got {topic!r})")
    if not isinstance(client_id, str) or client_id == "":
        problems.append(f"client_id: must be a non-empty string (got {client_id!r})")
    if kafka_config is not None:
        if not isinstance(kafka_config, Mapping):
            problems.append(
                f"kafka_config: must be a mapping of librdkafka settings (got {type(kafka_config).__name__})"
            )
        else:
            for key in kafka_config:
                if key in _OWNED_SETTINGS:
                    problems.append(f"kafka_config.{key}: set by the publisher ({_OWNED_SETTINGS[key]})")
                elif not isinstance(key, str):
                    problems.append(f"kafka_config: setting names must be strings (got {key!r})")
    problems.extend(_check_limits(max_event_bytes, max_result_chars))
    problems.extend(persist_option_problems(persist))
    if not (
        isinstance(delivery_timeout, (int, float))
        and not isinstance(delivery_timeout, bool)
        and math.isfinite(delivery_timeout)
        and delivery_timeout > 0
    ):
        problems.append(f"delivery_timeout: must be a number of seconds above 0 (got {delivery_timeout!r})")
    return problems


class ToolEventPublisher:
    """Publishes runs' tool events to Kafka (confluent-kafka's Producer over librdkafka).

    Idempotent producer, acknowledgement from all in-sync replicas, keyed by conversationId with Kafka's murmur2
    partitioner (the partition the Java client and kafkajs pick). Each RunPublisher method waits for its events'
    delivery reports, at most `delivery_timeout` seconds (librdkafka retries within it), then raises PublishError.
    A retried step keeps its derived event id, so one that did reach the broker is still recorded once.

    `max_event_bytes`: the largest event (UTF-8 JSON) to send; set it to the service's MAX_EVENT_BYTES when that
    differs from its default (1 MiB). A call's arguments or a result that would make its event larger are cut to
    fit, with the truncation marker, and the event says how large they were (`originalBytes`).
    `max_result_chars`: results longer than this (UTF-16 code units of a string result's text, or of another
    result's JSON text) are cut to it: one limit, or `{"defaults": n, "tools": {"<tool name>": n}}` as the
    service's policy file states it. Default: no limit.
    `persist`: redaction before publishing (toolhistory.persist): a hook for every tool, `hook(payload, context)`
    with `context.kind` "arguments" or "result" and `context.tool_name`, or a mapping of tool names to hooks (tools
    not named are published as they are). It returns the payload to publish (redacted), "metadata" (no payload, its
    size) or None (no payload, no size), and runs before the limits. A hook that raises fails the publication
    (PersistHookError), nothing sent. A result needs its tool then: `tool_name`, else its call's, published by the
    same RunPublisher; a result whose tool is unknown is refused.
    `kafka_config`: further librdkafka settings (TLS, SASL, ...); the ones the guarantees above rest on are the
    publisher's own.

    Use it as a context manager, or call close(), which flushes.
    """

    def __init__(
        self,
        *,
        brokers: str | Sequence[str],
        topic: str = DEFAULT_TOOL_EVENTS_TOPIC,
        client_id: str = "toolhistory-publisher",
        kafka_config: Mapping[str, object] | None = None,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_result_chars: MaxResultChars | None = None,
        persist: PersistOption | None = None,
        delivery_timeout: float = 10.0,
    ) -> None:
        problems = _option_problems(
            brokers, topic, client_id, kafka_config, max_event_bytes, max_result_chars, persist, delivery_timeout
        )
        if problems:
            raise ValueError("; ".join(problems))
        self.topic = topic
        self._max_event_bytes = max_event_bytes
        self._max_result_chars = copy_max_result_chars(max_result_chars)
        self._persist = copy_persist_option(persist)
        self._delivery_timeout = float(delivery_timeout)
        self._closed = False
        config: dict[str, Any] = {
            "bootstrap.servers": brokers if isinstance(brokers, str) else ",".join(brokers),
            "client.id": client_id,
            "enable.idempotence": True,
            "acks": "all",
            "partitioner": "murmur2_random",
            # What idempotence allows: librdkafka keeps the order across the requests in flight.
            "max.in.flight.requests.per.connection": 5,
            "allow.auto.create.topics": False,
            "message.timeout.ms": max(1, round(self._delivery_timeout * 1000)),
            # librdkafka's default (1,000,000) is below the service's default event limit (1 MiB); room for the key.
            "message.max.bytes": min(1_000_000_000, max(1_000_000, max_event_bytes + 4096)),
            "log_level": 3,  # errors only
            **(kafka_config or {}),
        }
        try:
            self._producer = Producer(config)
        except KafkaException as error:
            raise ValueError(f"kafka_config: librdkafka refused the settings: {error}") from error

    def run(
        self,
        *,
        tenant_id: str,
        conversation_id: str,
        channel: str,
        run_id: str,
        user_message_id: str | None = None,
    ) -> RunPublisher:
        """A run's publishing methods; nothing is sent until one is called. The ids must be non-empty strings."""
        scope = RunScope(tenant_id, conversation_id, channel, run_id, user_message_id)
        return RunPublisher(scope, partial(self._publish, scope))

    def flush(self, timeout: float | None = None) -> None:
        """Waits until every event handed to the producer is delivered or failed (`timeout` seconds at most;
        default `delivery_timeout`). Raises PublishError when some are still waiting."""
        wait = self._delivery_timeout if timeout is None else timeout
        remaining = self._producer.flush(wait)
        if remaining > 0:
            raise PublishError(f"{remaining} events still waiting for the broker after {wait:g} s", retriable=True)

    def close(self) -> None:
        """Flushes (at most `delivery_timeout` seconds) and releases the producer. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._producer.flush(self._delivery_timeout)
        close = getattr(self._producer, "close", None)  # confluent-kafka 2.13 and later
        if callable(close):
            close()

    def __enter__(self) -> ToolEventPublisher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _publish(self, scope: RunScope, events: Sequence[PendingEvent]) -> list[PublishedEvent]:
        """Checks every event first (nothing is sent if one is invalid or cannot be made to fit), cutting payloads
        over the limits, then produces them in order and waits for their delivery reports."""
        if self._closed:
            raise PublishError("the publisher is closed", retriable=False)
        prepared = prepare_events(
            scope,
            events,
            max_event_bytes=self._max_event_bytes,
            max_result_chars=self._max_result_chars,
            persist=self._persist,
        )
        if not prepared:
            return []
        return self._deliver(scope.conversation_id, prepared)

    def _deliver(self, key: str, prepared: Sequence[PreparedEvent]) -> list[PublishedEvent]:
        delivery = _Delivery(len(prepared))
        key_bytes = key.encode("utf-8")
        for index, event in enumerate(prepared):
            try:
                self._producer.produce(
                    self.topic,
                    value=event.value.encode("utf-8"),
                    key=key_bytes,
                    on_delivery=partial(delivery.report, index),
                )
            except BufferError as error:
                raise PublishError(f"the producer's queue is full: {error}", retriable=True) from error
            except KafkaException as error:
                kafka_error = error.args[0] if error.args and isinstance(error.args[0], KafkaError) else None
                if kafka_error is None:
                    raise PublishError(str(error), retriable=False) from error
                reason = _describe_kafka_error(kafka_error)
                raise PublishError(reason, retriable=_is_retriable(kafka_error)) from error
        deadline = time.monotonic() + self._delivery_timeout + _REPORT_GRACE_SECONDS
        while not delivery.done.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PublishError(
                    f"no delivery report within {self._delivery_timeout:g} s for "
                    f"{delivery.count - len(delivery.reports)} of {delivery.count} events",
                    retriable=True,
                )
            self._producer.poll(min(remaining, _POLL_INTERVAL_SECONDS))
        published: list[PublishedEvent] = []
        failures: list[KafkaError] = []
        for index, event in enumerate(prepared):
            failure, message = delivery.reports[index]
            if failure is not None:
                failures.append(failure)
            elif message is not None:
                partition = message.partition() or 0
                offset = message.offset()
                # An acknowledgement without an offset (never with acks=all) names nowhere to wait for.
                token = (
                    kafka_consistency_token(message.topic() or self.topic, partition, offset)
                    if isinstance(offset, int) and offset >= 0
                    else ""
                )
                published.append(PublishedEvent(event.event_id, event.type, partition, offset or 0, token))
        if failures:
            first = failures[0]
            reason = _describe_kafka_error(first)
            if len(prepared) > 1:
                reason = f"{len(failures)} of {len(prepared)} events not delivered: {reason}"
            raise PublishError(reason, retriable=all(_is_retriable(failure) for failure in failures))
        return published
