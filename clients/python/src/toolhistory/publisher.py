"""Publishing a run's tool events to Kafka, as the service's contract wants them and as the TypeScript client does.

Events are validated before they are sent, cut to the limits when a payload is too large, keyed by conversation
(Kafka's murmur2 partitioner, the Java client's and kafkajs's, so a conversation published from Python and from Node
lands on one partition), and sent by an idempotent producer with acknowledgement from all in-sync replicas, which
keeps a conversation's events in order.
"""

from __future__ import annotations

from toolhistory._citations import cited_sources_from
from toolhistory._kafka_publisher import ToolEventPublisher
from toolhistory._prepare import (
    DEFAULT_TOOL_EVENTS_TOPIC,
    PUBLISHED_SCHEMA_VERSION,
    PendingEvent,
    PreparedEvent,
    Send,
    prepare_events,
)
from toolhistory._run_publisher import RunPublisher
from toolhistory.validation import DEFAULT_MAX_EVENT_BYTES

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_TOOL_EVENTS_TOPIC",
    "PUBLISHED_SCHEMA_VERSION",
    "PendingEvent",
    "PreparedEvent",
    "RunPublisher",
    "Send",
    "ToolEventPublisher",
    "cited_sources_from",
    "prepare_events",
]
