"""What the sync and the async clients share: arguments checked and turned into requests, the channel's
credentials, the bearer token, deadlines, and the subscription's resumption. Only the I/O differs between them."""

from __future__ import annotations

import ipaddress
import json
import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

import grpc

from toolhistory.consistency import remember_consistency_token, token_for_read
from toolhistory.errors import ToolHistoryError
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from google.protobuf.timestamp_pb2 import Timestamp

    from toolhistory.formats import HistoryFormat

HistoryView: TypeAlias = Literal["all", "messages", "structured"]
"""What each replayed turn carries: both representations, the provider messages only, or the rounds only."""
StaleResults: TypeAlias = Literal["drop", "placeholder"]
"""What replay does with a result past its freshness window: leave the pair out, or keep it with a notice."""
InvocationStatusFilter: TypeAlias = Literal["pending", "succeeded", "error"]
UsageBucket: TypeAlias = Literal["hour", "day"]
SearchMatch: TypeAlias = Literal["words", "substring"]
"""How a search query matches: whole words, best first; or one literal text anywhere (3+ characters), newest first."""

TokenSource: TypeAlias = str | Callable[[], str]
"""A bearer token, or a function that returns a current one (called before every call, so it may refresh)."""

WIRE_FORMAT: Mapping[HistoryFormat, toolhistory_pb2.HistoryFormat.ValueType] = {
    "openai": toolhistory_pb2.HISTORY_FORMAT_OPENAI_CHAT,
    "anthropic": toolhistory_pb2.HISTORY_FORMAT_ANTHROPIC_MESSAGES,
    "openai-responses": toolhistory_pb2.HISTORY_FORMAT_OPENAI_RESPONSES,
    "gemini": toolhistory_pb2.HISTORY_FORMAT_GEMINI,
    "bedrock-converse": toolhistory_pb2.HISTORY_FORMAT_BEDROCK_CONVERSE,
}
WIRE_VIEW: Mapping[HistoryView, toolhistory_pb2.ReplayView.ValueType] = {
    "all": toolhistory_pb2.REPLAY_VIEW_UNSPECIFIED,
    "messages": toolhistory_pb2.REPLAY_VIEW_MESSAGES,
    "structured": toolhistory_pb2.REPLAY_VIEW_STRUCTURED,
}
WIRE_STALE_RESULTS: Mapping[StaleResults, toolhistory_pb2.StaleResultMode.ValueType] = {
    "drop": toolhistory_pb2.STALE_RESULT_MODE_DROP,
    "placeholder": toolhistory_pb2.STALE_RESULT_MODE_PLACEHOLDER,
}
WIRE_STATUS: Mapping[InvocationStatusFilter, toolhistory_pb2.InvocationStatus.ValueType] = {
    "pending": toolhistory_pb2.INVOCATION_STATUS_PENDING,
    "succeeded": toolhistory_pb2.INVOCATION_STATUS_SUCCEEDED,
    "error": toolhistory_pb2.INVOCATION_STATUS_ERROR,
}
WIRE_BUCKET: Mapping[UsageBucket, toolhistory_pb2.UsageBucket.ValueType] = {
    "hour": toolhistory_pb2.USAGE_BUCKET_HOUR,
    "day": toolhistory_pb2.USAGE_BUCKET_DAY,
}
WIRE_MATCH: Mapping[SearchMatch, toolhistory_pb2.SearchMatch.ValueType] = {
    "words": toolhistory_pb2.SEARCH_MATCH_WORDS,
    "substring": toolhistory_pb2.SEARCH_MATCH_SUBSTRING,
}

DEFAULT_TIMEOUT = 30.0
"""Seconds a call may take when neither the call nor the client names a deadline."""
ERASE_TIMEOUT = 30.0
"""An erasure removes a whole conversation in one transaction: by default it may take at least this long."""

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1

K = TypeVar("K", bound=str)
V = TypeVar("V")


def wire_value(name: str, value: object, mapping: Mapping[K, V]) -> V:
    """The proto enum value of a friendly name, or a ValueError naming the argument and the names it takes."""
    if isinstance(value, str) and value in mapping:
        return mapping[value]  # type: ignore[index]  # value is one of the keys, checked above
    raise ValueError(f"{name}: {value!r} is not one of {', '.join(repr(key) for key in mapping)}")


def _whole(name: str, value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: {value!r} is not a whole number of {what}, {low} to {high}")
    return value


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: {value!r} is not a string")
    return value


def _optional_text(name: str, value: object) -> str:
    return "" if value is None else _text(name, value)


def _timestamp(name: str, value: object) -> Timestamp:
    from google.protobuf.timestamp_pb2 import Timestamp

    if not isinstance(value, datetime):
        raise ValueError(f"{name}: {value!r} is not a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        # A naive datetime is local time to some and UTC to others: say which.
        raise ValueError(f"{name}: {value.isoformat()} has no time zone (use e.g. datetime.now(timezone.utc))")
    stamp = Timestamp()
    stamp.FromDatetime(value.astimezone(timezone.utc))
    return stamp


def datetime_of(stamp: Timestamp) -> datetime:
    """A proto Timestamp as an aware UTC datetime."""
    return stamp.ToDatetime(tzinfo=timezone.utc)


# -- Requests. Each checks its arguments before anything is sent, and names the one that is wrong.


def replay_request(
    *,
    tenant_id: str,
    conversation_id: str,
    format: HistoryFormat,
    channel: str | None,
    as_of: datetime | None,
    freshness_window_seconds: int | None,
    stale_results: StaleResults | None,
    view: HistoryView,
    max_history_tokens: int | None,
    consistency_token: str | None = None,
    branch_message_ids: Sequence[str] | None = None,
) -> toolhistory_pb2.GetReplayHistoryRequest:
    """The GetReplayHistory request of the clients' arguments (``consistency_token`` None: this process's last one
    for the conversation)."""
    request = toolhistory_pb2.GetReplayHistoryRequest(
        tenant_id=_text("tenant_id", tenant_id),
        conversation_id=_text("conversation_id", conversation_id),
        channel=_optional_text("channel", channel),
        format=wire_value("format", format, WIRE_FORMAT),
        view=wire_value("view", view, WIRE_VIEW),
        stale_results=(
            toolhistory_pb2.STALE_RESULT_MODE_UNSPECIFIED
            if stale_results is None
            else wire_value("stale_results", stale_results, WIRE_STALE_RESULTS)
        ),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
        branch_message_ids=_message_ids("branch_message_ids", branch_message_ids),
    )
    if as_of is not None:
        request.as_of.CopyFrom(_timestamp("as_of", as_of))
    if freshness_window_seconds is not None:
        request.freshness_window_seconds = _whole(
            "freshness_window_seconds", freshness_window_seconds, 0, _INT64_MAX, "seconds"
        )
    if max_history_tokens is not None:
        request.max_history_tokens = _whole("max_history_tokens", max_history_tokens, 0, _INT32_MAX, "tokens")
    return request


def invocations_request(
    *,
    tenant_id: str,
    conversation_id: str | None,
    run_id: str | None,
    tool_name: str | None,
    status: InvocationStatusFilter | None,
    from_: datetime | None,
    to: datetime | None,
    page_size: int | None,
    consistency_token: str | None = None,
) -> toolhistory_pb2.ListToolInvocationsRequest:
    """The first page's ListToolInvocations request; later pages set ``page_token``."""
    request = toolhistory_pb2.ListToolInvocationsRequest(
        tenant_id=_text("tenant_id", tenant_id),
        conversation_id=_optional_text("conversation_id", conversation_id),
        run_id=_optional_text("run_id", run_id),
        tool_name=_optional_text("tool_name", tool_name),
        status=(
            toolhistory_pb2.INVOCATION_STATUS_UNSPECIFIED
            if status is None
            else wire_value("status", status, WIRE_STATUS)
        ),
        page_size=0 if page_size is None else _whole("page_size", page_size, 1, _INT32_MAX, "invocations"),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )
    _set_period(request, from_, to)
    return request


def usage_request(
    *, tenant_id: str, from_: datetime, to: datetime, bucket: UsageBucket
) -> toolhistory_pb2.GetUsageRequest:
    """The GetUsage request of the clients' arguments."""
    request = toolhistory_pb2.GetUsageRequest(
        tenant_id=_text("tenant_id", tenant_id), bucket=wire_value("bucket", bucket, WIRE_BUCKET)
    )
    getattr(request, "from").CopyFrom(_timestamp("from_", from_))
    request.to.CopyFrom(_timestamp("to", to))
    return request


def search_request(
    *,
    tenant_id: str,
    query: str,
    conversation_id: str | None,
    limit: int | None,
    from_: datetime | None,
    to: datetime | None,
    match: SearchMatch = "words",
    consistency_token: str | None = None,
) -> toolhistory_pb2.SearchToolHistoryRequest:
    """The SearchToolHistory request of the clients' arguments."""
    request = toolhistory_pb2.SearchToolHistoryRequest(
        tenant_id=_text("tenant_id", tenant_id),
        query=_text("query", query),
        conversation_id=_optional_text("conversation_id", conversation_id),
        limit=0 if limit is None else _whole("limit", limit, 1, _INT32_MAX, "hits"),
        match=wire_value("match", match, WIRE_MATCH),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )
    _set_period(request, from_, to)
    return request


def erase_request(*, tenant_id: str, conversation_id: str) -> toolhistory_pb2.EraseConversationRequest:
    """The EraseConversation request of the clients' arguments."""
    return toolhistory_pb2.EraseConversationRequest(
        tenant_id=_text("tenant_id", tenant_id), conversation_id=_text("conversation_id", conversation_id)
    )


def watch_request(
    *, tenant_id: str, conversation_id: str, consistency_token: str | None = None
) -> toolhistory_pb2.WatchConversationRequest:
    """The WatchConversation request of the clients' arguments."""
    return toolhistory_pb2.WatchConversationRequest(
        tenant_id=_text("tenant_id", tenant_id),
        conversation_id=_text("conversation_id", conversation_id),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )


def fork_request(
    *,
    tenant_id: str,
    conversation_id: str,
    up_to_message_id: str,
    new_conversation_id: str,
    consistency_token: str | None = None,
) -> toolhistory_pb2.ForkConversationRequest:
    """The ForkConversation request of the clients' arguments (``consistency_token`` None: this process's last one
    for the source)."""
    return toolhistory_pb2.ForkConversationRequest(
        tenant_id=_text("tenant_id", tenant_id),
        conversation_id=_text("conversation_id", conversation_id),
        up_to_message_id=_text("up_to_message_id", up_to_message_id),
        new_conversation_id=_text("new_conversation_id", new_conversation_id),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )


def remember_fork(
    request: toolhistory_pb2.ForkConversationRequest, response: toolhistory_pb2.ForkConversationResponse
) -> None:
    """This process's reads of the new conversation wait for the whole fork."""
    remember_consistency_token(request.tenant_id, request.new_conversation_id, response.consistency_token)


def _message_ids(name: str, ids: Sequence[str] | None) -> list[str]:
    if ids is None:
        return []
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise ValueError(f"{name}: {ids!r:.80} is not a sequence of message ids")
    for at, message_id in enumerate(ids):
        if not isinstance(message_id, str) or not message_id:
            raise ValueError(f"{name}[{at}]: {message_id!r:.80} is not a message id (a non-empty string)")
    return list(ids)


def _set_period(
    request: toolhistory_pb2.ListToolInvocationsRequest | toolhistory_pb2.SearchToolHistoryRequest,
    from_: datetime | None,
    to: datetime | None,
) -> None:
    # The proto field is named `from`, a Python keyword: the arguments say `from_`.
    if from_ is not None:
        getattr(request, "from").CopyFrom(_timestamp("from_", from_))
    if to is not None:
        request.to.CopyFrom(_timestamp("to", to))


# -- The channel: credentials, options, and where a token may go.


@dataclass(frozen=True)
class TlsConfig:
    """TLS settings of the channel (PEM bytes).

    Attributes:
        root_certificates: the CAs to trust; ``None``: the system's roots.
        private_key: the client's key, with ``certificate_chain``, for mutual TLS.
        certificate_chain: the client's certificate chain, with ``private_key``.
        server_name_override: the name to check the server's certificate against instead of the address's host.
    """

    root_certificates: bytes | None = None
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    server_name_override: str | None = None


@dataclass(frozen=True)
class ChannelSetup:
    """How the clients open their channel: ``credentials`` is ``None`` for plaintext."""

    address: str
    credentials: grpc.ChannelCredentials | None
    options: list[tuple[str, Any]]


def channel_setup(
    address: str,
    *,
    token_given: bool,
    tls: bool | TlsConfig,
    channel_options: Sequence[tuple[str, Any]],
    allow_token_without_tls: bool,
) -> ChannelSetup:
    """The channel of the clients' arguments, refusing a token in the clear to another machine."""
    if not isinstance(address, str) or not address:
        raise ValueError(f"address: {address!r} is not a host:port")
    if not isinstance(tls, (bool, TlsConfig)):
        raise ValueError(f"tls: {tls!r} is neither a bool nor a TlsConfig")
    if token_given and tls is False and not allow_token_without_tls and not is_loopback(address):
        raise ValueError(
            f"token: a bearer token is not sent in the clear to {address}: set tls, or allow_token_without_tls=True "
            "when something else encrypts the connection"
        )
    options = list(channel_options)
    if tls is False:
        return ChannelSetup(address, None, options)
    if tls is True:
        return ChannelSetup(address, grpc.ssl_channel_credentials(), options)
    if (tls.private_key is None) != (tls.certificate_chain is None):
        raise ValueError("tls: private_key and certificate_chain go together (mutual TLS needs both)")
    if tls.server_name_override is not None:
        options.append(("grpc.ssl_target_name_override", tls.server_name_override))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.root_certificates,
        private_key=tls.private_key,
        certificate_chain=tls.certificate_chain,
    )
    return ChannelSetup(address, credentials, options)


def is_loopback(address: str) -> bool:
    """Whether a gRPC target names this machine: 127.0.0.0/8, ::1, localhost, or a unix socket."""
    target = address.strip().lower()
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    if target.startswith("dns:"):
        # dns:host:port, dns:///host:port, dns://resolver/host:port
        target = target[len("dns:") :]
        if target.startswith("//"):
            target = target[2:].split("/", 1)[-1]
    elif target.startswith(("ipv4:", "ipv6:")):
        hosts = target.split(":", 1)[1].split(",")
        return all(_is_loopback_host(_host_of(host)) for host in hosts)
    return _is_loopback_host(_host_of(target))


def _host_of(host_port: str) -> str:
    if host_port.startswith("["):
        return host_port[1:].split("]", 1)[0]
    if host_port.count(":") == 1:
        return host_port.split(":", 1)[0]
    return host_port  # no port, or a bare IPv6 address


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- Tokens and deadlines.


def check_token_source(token: object) -> None:
    """Refuses a token that is neither a non-empty string nor a callable."""
    if token is None or callable(token):
        return
    if not isinstance(token, str) or not token:
        raise ValueError(f"token: {_redacted(token)} is neither a non-empty string nor a function that returns one")


def authorization_metadata(token: object) -> tuple[tuple[str, str], ...]:
    """The call's headers for a fetched token (none without one)."""
    if token is None:
        return ()
    if not isinstance(token, str) or not token or "\n" in token or "\r" in token:
        raise ValueError(f"token: the token source returned {_redacted(token)}, not a non-empty one-line string")
    return (("authorization", f"Bearer {token}"),)


def _redacted(token: object) -> str:
    # Never repeat a credential in an error message: say what kind of value it was.
    return repr(token) if token is None or token == "" else f"a {type(token).__name__}"


def check_timeout(name: str, timeout: object) -> float | None:
    """A deadline in seconds (``None``: none), or a ValueError naming the argument."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"{name}: {timeout!r} is not a number of seconds above 0 (or None)")
    return float(timeout)


def erase_timeout(timeout: float | None, default: float | None) -> float | None:
    """An erasure's deadline: the call's, else the client's but at least ERASE_TIMEOUT."""
    if timeout is not None:
        return check_timeout("timeout", timeout)
    return None if default is None else max(default, ERASE_TIMEOUT)


class Deadline:
    """A call's deadline, taken before its token is fetched: a slow identity provider must not hold a turn past it."""

    def __init__(self, timeout: float | None, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._at = None if timeout is None else clock() + timeout

    def left(self) -> float | None:
        """Seconds left, 0 at the least (``None``: no deadline)."""
        return None if self._at is None else max(0.0, self._at - self._clock())

    def remaining(self, method: str) -> float | None:
        """Seconds left (``None``: no deadline); DEADLINE_EXCEEDED when none are."""
        if self._at is None:
            return None
        left = self._at - self._clock()
        if left <= 0:
            raise ToolHistoryError(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the call was sent", method
            )
        return left


# -- Busy refusals: the pushback honoured.

DEFAULT_MAX_ATTEMPTS = 3
"""A call refused RESOURCE_EXHAUSTED with a pushback is tried this often in all, by default (within its deadline)."""
_MIN_TIME_FOR_AN_ATTEMPT = 0.01


def check_max_attempts(max_attempts: object) -> int:
    """A number of attempts, 1 or more, or a ValueError naming the argument."""
    if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
        raise ValueError(f"max_attempts: {max_attempts!r} is not a whole number, 1 or more")
    return max_attempts


def jittered_pushback(pushback_ms: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds to wait after a pushback: never sooner than the service asked, and up to half as long again at
    random, so callers refused together do not come back together."""
    return pushback_ms * (1 + rand() / 2) / 1000


def retry_delay(
    error: ToolHistoryError,
    attempt: int,
    max_attempts: int,
    deadline: Deadline,
    rand: Callable[[], float] = random.random,
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or ``None`` to give up now.

    Only RESOURCE_EXHAUSTED with a pushback is retried (the service said when to come back), at most
    ``max_attempts`` in all, and only when the wait leaves time for an attempt before the deadline: a turn is
    better served by failing fast than by waiting past it.
    """
    if error.code != grpc.StatusCode.RESOURCE_EXHAUSTED or error.retry_after_ms is None or attempt >= max_attempts:
        return None
    wait = jittered_pushback(error.retry_after_ms, rand)
    left = deadline.left()
    if left is not None and wait + _MIN_TIME_FOR_AN_ATTEMPT > left:
        return None
    return wait


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
        self.tenant_id = _text("tenant_id", tenant_id)
        self.position = _whole("from_position", from_position, 0, _UINT64_MAX, "positions")
        if isinstance(types, str):
            raise ValueError(f"types: {types!r} is one string, not a sequence of event types")
        self.types = [_text("types", event_type) for event_type in types or ()]
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
