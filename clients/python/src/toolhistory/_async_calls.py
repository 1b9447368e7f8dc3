"""How the asyncio client calls the service: the bearer token (fetched within the call's deadline) and a deadline
on every call, the subscription's resumption and the watch's stream, each ending the server's stream when the caller
stops."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import grpc
import grpc.aio

from toolhistory import _grpc
from toolhistory._grpc import SubscribedEvent
from toolhistory.errors import ToolHistoryError, from_rpc_error

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from toolhistory.v1 import toolhistory_pb2, toolhistory_pb2_grpc

AsyncTokenSource: TypeAlias = str | Callable[[], str | Awaitable[str]]
"""A bearer token, or a function (plain or async) that returns a current one, called before every call."""

Req = TypeVar("Req")
Res = TypeVar("Res")


class AsyncCalls:
    """What AsyncToolHistoryClient's methods have in common: set up by its constructor."""

    _stub: toolhistory_pb2_grpc.ToolHistoryAsyncStub
    _token: AsyncTokenSource | None
    _timeout: float | None
    _max_attempts: int
    _closed: bool

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
            raise RuntimeError(f"the {type(self).__name__} is closed")

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
        # The tenant in the headers too: a flooded service refuses the read from them, before reading it.
        tenant = _grpc.tenant_metadata(request)
        attempt = 1
        while True:
            metadata = await self._metadata(deadline, method) + tenant
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
