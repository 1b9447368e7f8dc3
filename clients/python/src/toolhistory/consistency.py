"""Consistency tokens: where a publisher's events landed, handed to reads so they answer only once those events are
recorded (read-your-writes).

Callers treat a token as opaque, printable text. Its grammar is the contract's (libs/contract/src/consistency-token.ts,
checked against the shared test vectors), the same for the service, the TypeScript client and this package, and is
only ever extended with a new version prefix, so a token written by any client version stays readable:

    ct1:k:<topic>:<partition>:<offset>   a Kafka message: recorded once the recorder is past it
    ct1:p:<position>                     a global position of the event store (what the service wrote, e.g. a fork)

This process remembers the last token it published for each conversation (``RunPublisher`` does it after every
publish, ``fork_conversation`` for the new conversation), and the clients' reads of a conversation send it unless
they are given one. A host whose reads run in another process carries the token there (e.g. in its message row):
``last_consistency_token(tenant_id, conversation_id)`` or ``RunPublisher.consistency_token``.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "CONSISTENCY_TOKEN_PREFIX",
    "MAX_CONSISTENCY_TOKEN_LENGTH",
    "MAX_REMEMBERED_CONVERSATIONS",
    "ConsistencyToken",
    "EventStorePosition",
    "KafkaMessage",
    "format_consistency_token",
    "kafka_consistency_token",
    "last_consistency_token",
    "later_consistency_token",
    "parse_consistency_token",
    "remember_consistency_token",
]

CONSISTENCY_TOKEN_PREFIX = "ct1"
MAX_CONSISTENCY_TOKEN_LENGTH = 300
"""Longer text is no token of any version, and is refused before it is split."""

# Kafka's own rule for topic names; decimals as the contract writes them (no sign, no leading zero, ASCII digits).
_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,18}")
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class KafkaMessage:
    """A token naming the message at ``offset`` of the topic's partition."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class EventStorePosition:
    """A token naming the event at this global position of the event store."""

    position: int


ConsistencyToken: TypeAlias = KafkaMessage | EventStorePosition
"""What a consistency token names (``parse_consistency_token``)."""


def format_consistency_token(token: ConsistencyToken) -> str:
    """The token's text."""
    if isinstance(token, KafkaMessage):
        return f"{CONSISTENCY_TOKEN_PREFIX}:k:{token.topic}:{token.partition}:{token.offset}"
    return f"{CONSISTENCY_TOKEN_PREFIX}:p:{token.position}"


def kafka_consistency_token(topic: str, partition: int, offset: int) -> str:
    """The token of a Kafka message as a producer's acknowledgement names it (for a ``Send`` that publishes
    the events itself)."""
    return format_consistency_token(KafkaMessage(topic, partition, offset))


def parse_consistency_token(text: str) -> ConsistencyToken:
    """What the token names.

    Raises:
        ValueError: the text is no token (the message says why).
    """
    if not isinstance(text, str):
        raise ValueError(f"not a consistency token: {type(text).__name__}, not a string")
    if len(text) > MAX_CONSISTENCY_TOKEN_LENGTH:
        raise ValueError(f"not a consistency token: longer than {MAX_CONSISTENCY_TOKEN_LENGTH} characters")
    parts = text.split(":")
    if parts[0] != CONSISTENCY_TOKEN_PREFIX:
        raise ValueError(f'not a consistency token: it does not start with "{CONSISTENCY_TOKEN_PREFIX}:"')
    if len(parts) == 5 and parts[1] == "k":
        _, _, topic, partition, offset = parts
        if not _TOPIC.fullmatch(topic):
            raise ValueError("not a consistency token: its topic is not a Kafka topic name")
        if not _DECIMAL.fullmatch(partition) or int(partition) > _INT32_MAX:
            raise ValueError("not a consistency token: its partition is not a partition number")
        if not _DECIMAL.fullmatch(offset) or int(offset) > _INT64_MAX:
            raise ValueError("not a consistency token: its offset is not an offset")
        return KafkaMessage(topic, int(partition), int(offset))
    if len(parts) == 3 and parts[1] == "p":
        position = parts[2]
        if not _DECIMAL.fullmatch(position) or int(position) > _INT64_MAX or position == "0":
            raise ValueError("not a consistency token: its position is not a position")
        return EventStorePosition(int(position))
    raise ValueError("not a consistency token: its kind is not one this client knows")


def _parsed(text: str) -> ConsistencyToken | None:
    try:
        return parse_consistency_token(text)
    except ValueError:
        return None


def later_consistency_token(current: str | None, next_token: str) -> str:
    """The later of two tokens of one conversation: on the same partition the higher offset (of two positions, the
    higher one); otherwise ``next_token``, as the conversation's later events went there. ``current`` None:
    ``next_token``."""
    if current is None:
        return next_token
    a, b = _parsed(current), _parsed(next_token)
    if isinstance(a, KafkaMessage) and isinstance(b, KafkaMessage) and (a.topic, a.partition) == (b.topic, b.partition):
        return current if a.offset > b.offset else next_token
    if isinstance(a, EventStorePosition) and isinstance(b, EventStorePosition):
        return current if a.position > b.position else next_token
    return next_token


class _TokenRegistry:
    """The last token per (tenant, conversation), at most ``capacity`` conversations: the one least recently
    published for is forgotten first (its reads then wait for nothing). Safe to share between threads."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._tokens: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, tenant_id: str, conversation_id: str, token: str) -> None:
        key = (tenant_id, conversation_id)
        with self._lock:
            self._tokens[key] = later_consistency_token(self._tokens.get(key), token)
            self._tokens.move_to_end(key)
            while len(self._tokens) > self._capacity:
                self._tokens.popitem(last=False)

    def last(self, tenant_id: str, conversation_id: str) -> str | None:
        with self._lock:
            return self._tokens.get((tenant_id, conversation_id))

    def __len__(self) -> int:
        with self._lock:
            return len(self._tokens)


MAX_REMEMBERED_CONVERSATIONS = 10_000
"""Conversations whose last token a process keeps."""

_REGISTRY = _TokenRegistry(MAX_REMEMBERED_CONVERSATIONS)


def remember_consistency_token(tenant_id: str, conversation_id: str, token: str) -> None:
    """Remembers what was published for the conversation in this process, for its own reads of it. A token older
    than the one kept (same partition, lower offset) changes nothing; an empty one is ignored. The publisher and
    ``fork_conversation`` call it; a host that publishes through its own ``Send`` may too."""
    if token:
        _REGISTRY.remember(tenant_id, conversation_id, token)


def last_consistency_token(tenant_id: str, conversation_id: str) -> str | None:
    """The last consistency token this process published for the conversation (None: none, or forgotten).

    This process's reads of the conversation send it by themselves. A host whose reads run in another process
    carries it there (e.g. in its message row) and passes it as ``consistency_token=``.
    """
    return _REGISTRY.last(tenant_id, conversation_id)


def token_for_read(given: str | None, tenant_id: str, conversation_id: str | None) -> str:
    """The token a read sends: the caller's (``""``: none), else the last one this process published for the
    conversation, else ``""``."""
    if given is not None:
        if not isinstance(given, str):
            raise ValueError(f"consistency_token: {given!r} is not a string")
        return given
    if not conversation_id or not isinstance(tenant_id, str) or not isinstance(conversation_id, str):
        return ""
    return _REGISTRY.last(tenant_id, conversation_id) or ""
