"""The ToolHistory gRPC API for asyncio: ``AsyncToolHistoryClient`` (on ``grpc.aio``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
import grpc.aio

from toolhistory import _grpc
from toolhistory._async_calls import AsyncCalls, AsyncTokenSource
from toolhistory._grpc import (
    DEFAULT_TIMEOUT,
    HistoryView,
    InvocationStatusFilter,
    SearchMatch,
    StaleResults,
    TlsConfig,
    UsageBucket,
)
from toolhistory.replay import ReplayHistory, replay_history_of
from toolhistory.splice import default_id_of, host_branch, splice_history
from toolhistory.v1 import toolhistory_pb2_grpc

if TYPE_CHECKING:
    from datetime import datetime
    from types import TracebackType

    from toolhistory.formats import HistoryFormat
    from toolhistory.v1 import toolhistory_pb2

__all__ = ["AsyncTokenSource", "AsyncToolHistoryClient"]

Req = TypeVar("Req")
Res = TypeVar("Res")
H = TypeVar("H")


class AsyncToolHistoryClient(AsyncCalls):
    """The ToolHistory gRPC API for asyncio code: ``ToolHistoryClient``'s methods as coroutines and async iterators.

    Create it inside the event loop that uses it (``grpc.aio`` binds its channel to that loop), and use it as
    an async context manager or ``await close()``.

    Args:
        address: the service's gRPC target, e.g. ``"toolhistory:50051"``.
        token: a bearer token, or a function, plain or async, that returns a current one; called before every
            call, so it may refresh. Fetching it counts against the call's deadline.
        tls: ``True``: TLS trusting the system's roots; a ``TlsConfig``: its CAs, client certificate
            (mutual TLS) and name override; ``False`` (default): plaintext.
        timeout: the deadline in seconds of a call that names none (``None``: no deadline). An erasure
            waits at least 30 s unless its call says otherwise.
        channel_options: gRPC channel options (keepalive, message sizes, ...).
        allow_token_without_tls: a token is sent in the clear only to a loopback address (or a unix
            socket) unless this says so, e.g. when a sidecar adds TLS.
        max_attempts: a unary call the service refuses as busy (``RESOURCE_EXHAUSTED`` with a
            ``grpc-retry-pushback-ms`` trailer) is tried again after that pushback, plus up to half of it at
            random, while its deadline leaves time: at most this many attempts in all (default 3; 1: never again).

    Raises:
        ValueError: an argument is wrong (the message names it).
    """

    def __init__(
        self,
        address: str,
        *,
        token: AsyncTokenSource | None = None,
        tls: bool | TlsConfig = False,
        timeout: float | None = DEFAULT_TIMEOUT,
        channel_options: Sequence[tuple[str, Any]] = (),
        allow_token_without_tls: bool = False,
        max_attempts: int = _grpc.DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        _grpc.check_token_source(token)
        self._timeout = _grpc.check_timeout("timeout", timeout)
        self._max_attempts = _grpc.check_max_attempts(max_attempts)
        setup = _grpc.channel_setup(
            address,
            token_given=token is not None,
            tls=tls,
            channel_options=channel_options,
            allow_token_without_tls=allow_token_without_tls,
        )
        self._token = token
        self._closed = False
        self._channel = (
            grpc.aio.insecure_channel(setup.address, options=setup.options)
            if setup.credentials is None
            else grpc.aio.secure_channel(setup.address, setup.credentials, options=setup.options)
        )
        self._stub = toolhistory_pb2_grpc.ToolHistoryStub(self._channel)

    async def __aenter__(self) -> AsyncToolHistoryClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the channel; calls in flight end CANCELLED. Closing again does nothing."""
        self._closed = True
        await self._channel.close()

    async def get_replay_history(
        self,
        *,
        tenant_id: str,
        conversation_id: str,
        format: HistoryFormat = "openai",
        channel: str | None = None,
        as_of: datetime | None = None,
        freshness_window_seconds: int | None = None,
        stale_results: StaleResults | None = None,
        view: HistoryView = "all",
        max_history_tokens: int | None = None,
        branch_message_ids: Sequence[str] | None = None,
        consistency_token: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        timeout: float | None = None,
    ) -> ReplayHistory:
        """The tool-call history the model may see again; see ``ToolHistoryClient.get_replay_history``
        (``branch_message_ids``: the host's current branch; ``consistency_token``: default, the last token this
        process published for the conversation; ``""``: none; ``model`` and ``provider``: the ones the host is about
        to call, whose reasoning alone is replayed)."""
        request = _grpc.replay_request(
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            format=format,
            channel=channel,
            as_of=as_of,
            freshness_window_seconds=freshness_window_seconds,
            stale_results=stale_results,
            view=view,
            max_history_tokens=max_history_tokens,
            consistency_token=consistency_token,
            branch_message_ids=branch_message_ids,
            model=model,
            provider=provider,
        )
        response = await self._unary(
            "GetReplayHistory", self._stub.GetReplayHistory, request, self._timeout_of(timeout)
        )
        return replay_history_of(response, format)

    async def spliced_history(
        self,
        *,
        tenant_id: str,
        conversation_id: str,
        host_messages: Sequence[H],
        id_of: Callable[[H], str | None] = default_id_of,
        format: HistoryFormat = "openai",
        channel: str | None = None,
        as_of: datetime | None = None,
        freshness_window_seconds: int | None = None,
        stale_results: StaleResults | None = None,
        max_history_tokens: int | None = None,
        consistency_token: str | None = None,
        model: str | None = None,
        provider: str | None = None,
        timeout: float | None = None,
    ) -> list[H | Any]:
        """The host's messages with the replayed tool history spliced in, for the host's current branch (its
        messages' ids sent as ``branch_message_ids``); see ``ToolHistoryClient.spliced_history``."""
        history = await self.get_replay_history(
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            format=format,
            channel=channel,
            as_of=as_of,
            freshness_window_seconds=freshness_window_seconds,
            stale_results=stale_results,
            max_history_tokens=max_history_tokens,
            view="messages",  # splicing reads the messages only: about half the bytes
            branch_message_ids=host_branch(host_messages, id_of),
            consistency_token=consistency_token,
            model=model,
            provider=provider,
            timeout=timeout,
        )
        return splice_history(host_messages, history, id_of=id_of)

    def list_tool_invocations(
        self,
        *,
        tenant_id: str,
        conversation_id: str | None = None,
        run_id: str | None = None,
        tool_name: str | None = None,
        status: InvocationStatusFilter | None = None,
        from_: datetime | None = None,
        to: datetime | None = None,
        page_size: int | None = None,
        consistency_token: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[toolhistory_pb2.Invocation, None]:
        """Every recorded invocation that matches, page after page (``async for``); see
        ``ToolHistoryClient.list_tool_invocations``. The arguments are checked here, before any page is asked for."""
        request = _grpc.invocations_request(
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            run_id=run_id,
            tool_name=tool_name,
            status=status,
            from_=from_,
            to=to,
            page_size=page_size,
            consistency_token=consistency_token,
        )
        return self._invocation_pages(request, self._timeout_of(timeout))

    async def _invocation_pages(
        self, request: toolhistory_pb2.ListToolInvocationsRequest, timeout: float | None
    ) -> AsyncGenerator[toolhistory_pb2.Invocation, None]:
        while True:
            page = await self._unary("ListToolInvocations", self._stub.ListToolInvocations, request, timeout)
            for invocation in page.invocations:
                yield invocation
            if not page.next_page_token:
                return
            request.page_token = page.next_page_token

    async def get_usage(
        self,
        *,
        tenant_id: str,
        from_: datetime,
        to: datetime,
        bucket: UsageBucket = "hour",
        timeout: float | None = None,
    ) -> toolhistory_pb2.GetUsageResponse:
        """Calls, errors and durations per tool and bucket, and the tokens of the runs that ended in ``[from_, to)``."""
        request = _grpc.usage_request(tenant_id=tenant_id, from_=from_, to=to, bucket=bucket)
        return await self._unary("GetUsage", self._stub.GetUsage, request, self._timeout_of(timeout))

    async def search_tool_history(
        self,
        *,
        tenant_id: str,
        query: str,
        conversation_id: str | None = None,
        limit: int | None = None,
        from_: datetime | None = None,
        to: datetime | None = None,
        match: SearchMatch = "words",
        consistency_token: str | None = None,
        timeout: float | None = None,
    ) -> toolhistory_pb2.SearchToolHistoryResponse:
        """Search by words (best first) or by substring (newest first); see ToolHistoryClient.search_tool_history."""
        request = _grpc.search_request(
            tenant_id=tenant_id,
            query=query,
            conversation_id=conversation_id,
            limit=limit,
            from_=from_,
            to=to,
            match=match,
            consistency_token=consistency_token,
        )
        return await self._unary("SearchToolHistory", self._stub.SearchToolHistory, request, self._timeout_of(timeout))

    async def erase_conversation(
        self, *, tenant_id: str, conversation_id: str, timeout: float | None = None
    ) -> toolhistory_pb2.EraseConversationResponse:
        """Removes a conversation from the event store and the read model (``timeout``: at least 30 s by default)."""
        request = _grpc.erase_request(tenant_id=tenant_id, conversation_id=conversation_id)
        return await self._unary(
            "EraseConversation",
            self._stub.EraseConversation,
            request,
            _grpc.erase_timeout(timeout, self._timeout),
        )

    async def fork_conversation(
        self,
        *,
        tenant_id: str,
        conversation_id: str,
        up_to_message_id: str,
        new_conversation_id: str,
        consistency_token: str | None = None,
        timeout: float | None = None,
    ) -> toolhistory_pb2.ForkConversationResponse:
        """A new conversation that starts with the source's history up to and including the run of
        ``up_to_message_id``, once the source's events through ``consistency_token`` are recorded (default: this
        process's last token for the source); this process's reads of the new conversation wait for the whole
        fork. See
        ``ToolHistoryClient.fork_conversation`` (``timeout``: at least 30 s by default)."""
        request = _grpc.fork_request(
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            up_to_message_id=up_to_message_id,
            new_conversation_id=new_conversation_id,
            consistency_token=consistency_token,
        )
        response = await self._unary(
            "ForkConversation", self._stub.ForkConversation, request, _grpc.erase_timeout(timeout, self._timeout)
        )
        _grpc.remember_fork(request, response)
        return response
