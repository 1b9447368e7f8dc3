"""The clients' arguments, checked and turned into requests: each names the argument that is wrong before anything is
sent."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Literal, TypeAlias, TypeVar

from toolhistory.consistency import remember_consistency_token, token_for_read
from toolhistory.formats import FORMAT_TABLE, HistoryFormat
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from google.protobuf.timestamp_pb2 import Timestamp

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
    row.client: toolhistory_pb2.HistoryFormat.Value(row.proto) for row in FORMAT_TABLE
}
"""The proto value of each format the clients name (the formats' table, toolhistory.formats)."""
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

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1

K = TypeVar("K", bound=str)
V = TypeVar("V")


def wire_value(name: str, value: object, mapping: Mapping[K, V]) -> V:
    """The proto enum value of a friendly name, or a ValueError naming the argument and the names it takes."""
    if isinstance(value, str) and value in mapping:
        return mapping[value]  # type: ignore[index]  # value is one of the keys, checked above
    raise ValueError(f"{name}: {value!r} is not one of {', '.join(repr(key) for key in mapping)}")


def whole_argument(name: str, value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{name}: {value!r} is not a whole number of {what}, {low} to {high}")
    return value


def text_argument(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: {value!r} is not a string")
    return value


def _optional_text(name: str, value: object) -> str:
    return "" if value is None else text_argument(name, value)


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
    model: str | None = None,
    provider: str | None = None,
) -> toolhistory_pb2.GetReplayHistoryRequest:
    """The GetReplayHistory request of the clients' arguments (``consistency_token`` None: this process's last one
    for the conversation)."""
    request = toolhistory_pb2.GetReplayHistoryRequest(
        tenant_id=text_argument("tenant_id", tenant_id),
        conversation_id=text_argument("conversation_id", conversation_id),
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
        model=_optional_text("model", model),
        provider=_optional_text("provider", provider),
    )
    if as_of is not None:
        request.as_of.CopyFrom(_timestamp("as_of", as_of))
    if freshness_window_seconds is not None:
        request.freshness_window_seconds = whole_argument(
            "freshness_window_seconds", freshness_window_seconds, 0, _INT64_MAX, "seconds"
        )
    if max_history_tokens is not None:
        request.max_history_tokens = whole_argument("max_history_tokens", max_history_tokens, 0, _INT32_MAX, "tokens")
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
        tenant_id=text_argument("tenant_id", tenant_id),
        conversation_id=_optional_text("conversation_id", conversation_id),
        run_id=_optional_text("run_id", run_id),
        tool_name=_optional_text("tool_name", tool_name),
        status=(
            toolhistory_pb2.INVOCATION_STATUS_UNSPECIFIED
            if status is None
            else wire_value("status", status, WIRE_STATUS)
        ),
        page_size=0 if page_size is None else whole_argument("page_size", page_size, 1, _INT32_MAX, "invocations"),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )
    _set_period(request, from_, to)
    return request


def usage_request(
    *, tenant_id: str, from_: datetime, to: datetime, bucket: UsageBucket
) -> toolhistory_pb2.GetUsageRequest:
    """The GetUsage request of the clients' arguments."""
    request = toolhistory_pb2.GetUsageRequest(
        tenant_id=text_argument("tenant_id", tenant_id), bucket=wire_value("bucket", bucket, WIRE_BUCKET)
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
        tenant_id=text_argument("tenant_id", tenant_id),
        query=text_argument("query", query),
        conversation_id=_optional_text("conversation_id", conversation_id),
        limit=0 if limit is None else whole_argument("limit", limit, 1, _INT32_MAX, "hits"),
        match=wire_value("match", match, WIRE_MATCH),
        consistency_token=token_for_read(consistency_token, tenant_id, conversation_id),
    )
    _set_period(request, from_, to)
    return request


def erase_request(*, tenant_id: str, conversation_id: str) -> toolhistory_pb2.EraseConversationRequest:
    """The EraseConversation request of the clients' arguments."""
    return toolhistory_pb2.EraseConversationRequest(
        tenant_id=text_argument("tenant_id", tenant_id),
        conversation_id=text_argument("conversation_id", conversation_id),
    )


def watch_request(
    *, tenant_id: str, conversation_id: str, consistency_token: str | None = None
) -> toolhistory_pb2.WatchConversationRequest:
    """The WatchConversation request of the clients' arguments."""
    return toolhistory_pb2.WatchConversationRequest(
        tenant_id=text_argument("tenant_id", tenant_id),
        conversation_id=text_argument("conversation_id", conversation_id),
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
        tenant_id=text_argument("tenant_id", tenant_id),
        conversation_id=text_argument("conversation_id", conversation_id),
        up_to_message_id=text_argument("up_to_message_id", up_to_message_id),
        new_conversation_id=text_argument("new_conversation_id", new_conversation_id),
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
