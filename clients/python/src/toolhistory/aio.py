"""The ToolHistory gRPC API for asyncio: ``AsyncToolHistoryClient`` (on ``grpc.aio``)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import grpc
import grpc.aio

from toolhistory import _grpc
from toolhistory._grpc import (
    DEFAULT_TIMEOUT,
    HistoryView,
    InvocationStatusFilter,
    SearchMatch,
    StaleResults,
    SubscribedEvent,
    TlsConfig,
    UsageBucket,
)
from toolhistory.errors import ToolHistoryError, from_rpc_error
from toolhistory.replay import ReplayHistory, replay_history_of
from toolhistory.splice import default_id_of, host_branch, splice_history
from toolhistory.v1 import toolhistory_pb2_grpc

if TYPE_CHECKING:
    from datetime import datetime
    from types import TracebackType

    from toolhistory.formats import HistoryFormat
    from toolhistory.v1 import toolhistory_pb2

__all__ = ["AsyncTokenSource", "AsyncToolHistoryClient"]

AsyncTokenSource: TypeAlias = str | Callable[[], str | Awaitable[str]]
"""A bearer token, or a function (plain or async) that returns a current one, called before every call."""

Req = TypeVar("Req")
Res = TypeVar("Res")
H = TypeVar("H")


class AsyncToolHistoryClient:
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
        timeout: float | None = None,
    ) -> ReplayHistory:
        """The tool-call history the model may see again; see ``ToolHistoryClient.get_replay_history``
        (``branch_message_ids``: the host's current branch; ``consistency_token``: default, the last token this
        process published for the conversation; ``""``: none)."""
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

    def subscribe(
        self,
        *,
        tenant_id: str,
        from_position: int = 0,
        types: Sequence[str] | None = None,
        reconnect: bool = False,
    ) -> AsyncGenerator[SubscribedEvent, None]:
        """The tenant's recorded events after ``from_position``, then live ones, for as long as the caller iterates
        (``async for``); see ``ToolHistoryClient.subscribe``.

        Stopping early with ``break`` ends the stream once the iterator is collected; wrap it in
        ``contextlib.aclosing`` to end it at once.
        """
        subscription = _grpc.Subscription(
            tenant_id=tenant_id, from_position=from_position, types=types, reconnect=reconnect
        )
        return self._subscription(subscription)

    async def _subscription(self, subscription: _grpc.Subscription) -> AsyncGenerator[SubscribedEvent, None]:
        while True:
            try:
                async with aclosing(self._stream(subscription)) as events:
                    async for event in events:
                        yield event
                return
            except ToolHistoryError as error:
                delay = subscription.retry_after(error)
                if delay is None:
                    raise
                await asyncio.sleep(delay)

    async def _stream(self, subscription: _grpc.Subscription) -> AsyncGenerator[SubscribedEvent, None]:
        self._check_open()
        metadata = await self._metadata(None, _grpc.SUBSCRIBE)
        call = self._stub.SubscribeToolEvents(subscription.request(), metadata=metadata)
        try:
            async for recorded in call:
                yield subscription.delivered(recorded)
        except grpc.RpcError as error:
            raise from_rpc_error(_grpc.SUBSCRIBE, error) from error
        finally:
            # The caller stopped early (break, aclose, an exception): end the server's stream too.
            call.cancel()

    def watch_conversation(
        self, *, tenant_id: str, conversation_id: str, consistency_token: str | None = None
    ) -> AsyncGenerator[toolhistory_pb2.ConversationChange, None]:
        """One conversation live, for as long as the caller iterates (``async for``): the snapshot parts, then
        one change per recorded event; see ``ToolHistoryClient.watch_conversation``.

        Stopping early with ``break`` ends the stream once the iterator is collected; wrap it in
        ``contextlib.aclosing`` to end it at once. ``NOT_FOUND`` (a ``ToolHistoryError``) when the
        conversation is erased.
        """
        request = _grpc.watch_request(
            tenant_id=tenant_id, conversation_id=conversation_id, consistency_token=consistency_token
        )
        return self._watch(request)

    async def _watch(
        self, request: toolhistory_pb2.WatchConversationRequest
    ) -> AsyncGenerator[toolhistory_pb2.ConversationChange, None]:
        self._check_open()
        metadata = await self._metadata(None, _grpc.WATCH)
        call = self._stub.WatchConversation(request, metadata=metadata)
        try:
            async for change in call:
                yield change
        except grpc.RpcError as error:
            raise from_rpc_error(_grpc.WATCH, error) from error
        finally:
            # The caller stopped early (break, aclose, an exception): end the server's stream too.
            call.cancel()

    def _check_open(self) -> None:
        # grpc's own error for a closed channel does not say which client; this one does.
        if self._closed:
            raise RuntimeError("the AsyncToolHistoryClient is closed")

    def _timeout_of(self, timeout: float | None) -> float | None:
        return self._timeout if timeout is None else _grpc.check_timeout("timeout", timeout)

    async def _metadata(self, deadline: _grpc.Deadline | None, method: str) -> tuple[tuple[str, str], ...]:
        token: object = self._token
        if callable(self._token):
            token = self._token()
            if inspect.isawaitable(token):
                try:
                    token = await asyncio.wait_for(token, None if deadline is None else deadline.remaining(method))
                except asyncio.TimeoutError:
                    raise ToolHistoryError(
                        grpc.StatusCode.DEADLINE_EXCEEDED, "the token was not fetched before the deadline", method
                    ) from None
        return _grpc.authorization_metadata(token)

    async def _unary(
        self,
        method: str,
        call: grpc.aio.UnaryUnaryMultiCallable[Req, Res],
        request: Req,
        timeout: float | None,
    ) -> Res:
        self._check_open()
        deadline = _grpc.Deadline(timeout)
        attempt = 1
        while True:
            metadata = await self._metadata(deadline, method)
            try:
                return await call(request, timeout=deadline.remaining(method), metadata=metadata)
            except grpc.RpcError as error:
                failure = from_rpc_error(method, error)
                # Busy, and told when to come back: once more after that, within the deadline.
                wait = _grpc.retry_delay(failure, attempt, self._max_attempts, deadline)
                if wait is None:
                    raise failure from error
            await asyncio.sleep(wait)
            attempt += 1
