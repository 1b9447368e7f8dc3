"""Publishing runs' events to Kafka through confluent-kafka's Producer (librdkafka), as the TypeScript client does."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError, KafkaException, Producer

from toolhistory._prepare import DEFAULT_TOOL_EVENTS_TOPIC, PendingEvent, PreparedEvent, _check_limits, prepare_events
from toolhistory._retriable import is_retriable
from toolhistory._run_publisher import RunPublisher
from toolhistory.consistency import kafka_consistency_token
from toolhistory.errors import PublishError
from toolhistory.events import MaxResultChars, PublishedEvent, RunScope
from toolhistory.persist import PersistOption, copy_persist_option, persist_option_problems
from toolhistory.truncation import copy_max_result_chars
from toolhistory.validation import DEFAULT_MAX_EVENT_BYTES

if TYPE_CHECKING:
    from types import TracebackType

    from confluent_kafka import Message

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

# How much longer than delivery_timeout a method waits for librdkafka's own report of a message it timed out.
_REPORT_GRACE_SECONDS = 5.0
_POLL_INTERVAL_SECONDS = 0.1


def _is_retriable(error: KafkaError) -> bool:
    """By the package's table of retriable codes (librdkafka's names), or librdkafka's own mark."""
    return is_retriable(str(error.name())) or bool(error.retriable())


def _publish_error(reason: str, error: KafkaError, *, retriable: bool | None = None) -> PublishError:
    return PublishError(
        reason, code=str(error.name()), retriable=_is_retriable(error) if retriable is None else retriable
    )


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
            raise PublishError(
                f"{remaining} events still waiting for the broker after {wait:g} s", code="EVENTS_WAITING"
            )

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
            raise PublishError("the publisher is closed", code="PUBLISHER_CLOSED")
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
                raise PublishError(f"the producer's queue is full: {error}", code="_QUEUE_FULL") from error
            except KafkaException as error:
                kafka_error = error.args[0] if error.args and isinstance(error.args[0], KafkaError) else None
                if kafka_error is None:
                    raise PublishError(str(error), code="UNKNOWN") from error
                reason = _describe_kafka_error(kafka_error)
                raise _publish_error(reason, kafka_error) from error
        deadline = time.monotonic() + self._delivery_timeout + _REPORT_GRACE_SECONDS
        while not delivery.done.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PublishError(
                    f"no delivery report within {self._delivery_timeout:g} s for "
                    f"{delivery.count - len(delivery.reports)} of {delivery.count} events",
                    code="DELIVERY_REPORT_MISSING",
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
            raise _publish_error(reason, first, retriable=all(_is_retriable(failure) for failure in failures))
        return published
