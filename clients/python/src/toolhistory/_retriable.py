"""The failures worth trying again with the same request (the service, the broker or the network was briefly unable,
the request itself was fine): the one table every error of the package takes ``retriable`` from, by the gRPC status of
a failed call or the code of a failed publication."""

from __future__ import annotations

_RETRIABLE = frozenset(
    {
        # gRPC statuses, by name.
        "UNAVAILABLE",
        "DEADLINE_EXCEEDED",
        "RESOURCE_EXHAUSTED",
        "ABORTED",
        # Kafka's own error codes, by librdkafka's names (a broker that is moving a partition, short of replicas, slow).
        "REQUEST_TIMED_OUT",
        "NETWORK_EXCEPTION",
        "LEADER_NOT_AVAILABLE",
        "NOT_LEADER_FOR_PARTITION",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "UNKNOWN_TOPIC_OR_PART",
        # librdkafka's own failures (it does not mark its timeouts retriable, though they are the commonest of them).
        "_MSG_TIMED_OUT",
        "_TIMED_OUT",
        "_TRANSPORT",
        "_ALL_BROKERS_DOWN",
        "_QUEUE_FULL",
        # The publisher's own: a delivery report that did not come in time, events still waiting at a flush.
        "DELIVERY_REPORT_MISSING",
        "EVENTS_WAITING",
    }
)


def is_retriable(status_or_code: str) -> bool:
    """Whether a failure of this gRPC status (its name) or publication code may pass when tried again."""
    return status_or_code in _RETRIABLE
