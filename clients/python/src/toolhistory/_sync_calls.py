"""How the blocking client calls the service: the bearer token and a deadline on every call, the subscription's
resumption and the watch's stream, each ending the server's stream when the caller stops."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, TypeVar

import grpc

from toolhistory import _grpc
from toolhistory._grpc import SubscribedEvent, TokenSource
from toolhistory.errors import ToolHistoryError, from_rpc_error

if TYPE_CHECKING:
    from collections.abc import Generator, Sequence

    from toolhistory.v1 import toolhistory_pb2, toolhistory_pb2_grpc

Req = TypeVar("Req")
Res = TypeVar("Res")


class SyncCalls:
    """What ToolHistoryClient's methods have in common: set up by its constructor."""

    _stub: toolhistory_pb2_grpc.ToolHistoryStub
    _token: TokenSource | None
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
    ) -> Generator[SubscribedEvent, None, None]:
        """The tenant's recorded events after ``from_position``, then live ones, for as long as the caller iterates.

        Stop iterating (``break``, or ``close()`` the iterator) to end the stream. Remember each event's
        ``position`` and pass it as ``from_position`` to resume without a gap or a duplicate. No deadline: a
        subscription is meant to stay open.

        Args:
            tenant_id: the tenant.
            from_position: the last position seen; 0: from the start.
            types: event types to deliver (``"ToolCallRequested"``, ...); default: all.
            reconnect: when the stream ends UNAVAILABLE (the service restarting or the network dropping), open
                it again after the last position delivered, with backoff (0.1 s doubling to 5 s), until the caller
                stops. Default ``False``: raise, as the TypeScript client does.

        Raises:
            ValueError: an argument is wrong; raised here, before the stream opens.
            ToolHistoryError: the stream failed (raised by the iteration).
        """
        subscription = _grpc.Subscription(
            tenant_id=tenant_id, from_position=from_position, types=types, reconnect=reconnect
        )
        return self._subscription(subscription)

    def _subscription(self, subscription: _grpc.Subscription) -> Generator[SubscribedEvent, None, None]:
        while True:
            try:
                yield from self._stream(subscription)
                return
            except ToolHistoryError as error:
                delay = subscription.retry_after(error)
                if delay is None:
                    raise
                time.sleep(delay)

    def _stream(self, subscription: _grpc.Subscription) -> Generator[SubscribedEvent, None, None]:
        self._check_open()
        call = self._stub.SubscribeToolEvents(subscription.request(), metadata=self._metadata())
        try:
            for recorded in call:
                yield subscription.delivered(recorded)
        except grpc.RpcError as error:
            raise from_rpc_error(_grpc.SUBSCRIBE, error) from error
        finally:
            # The caller stopped early (break, close, an exception): end the server's stream too.
            call.cancel()

    def watch_conversation(
        self, *, tenant_id: str, conversation_id: str, consistency_token: str | None = None
    ) -> Generator[toolhistory_pb2.ConversationChange, None, None]:
        """One conversation live, for as long as the caller iterates: first its invocations as they stand (one or
        more ``snapshot`` parts, the last one ``complete``), then one change per event recorded after that
        (``invocation_changed``: the invocation as it stands after the event; ``run_ended``: a run completed or
        failed, which also ends the ``running`` status of that run's invocations: apply it yourself).

        Stop iterating (``break``, or ``close()`` the iterator) to end the stream. No deadline: a watch is meant
        to stay open. It does not reconnect: after UNAVAILABLE (the service going away) watch again, which
        starts with a new snapshot. ``consistency_token``: as ``ToolHistoryClient`` says, for the snapshot.

        Raises:
            ValueError: an argument is wrong; raised here, before the stream opens.
            ToolHistoryError: the stream failed (raised by the iteration); ``NOT_FOUND`` when the conversation
                is erased.
        """
        request = _grpc.watch_request(
            tenant_id=tenant_id, conversation_id=conversation_id, consistency_token=consistency_token
        )
        return self._watch(request)

    def _watch(
        self, request: toolhistory_pb2.WatchConversationRequest
    ) -> Generator[toolhistory_pb2.ConversationChange, None, None]:
        self._check_open()
        call = self._stub.WatchConversation(request, metadata=self._metadata())
        try:
            yield from call
        except grpc.RpcError as error:
            raise from_rpc_error(_grpc.WATCH, error) from error
        finally:
            # The caller stopped early (break, close, an exception): end the server's stream too.
            call.cancel()

    def _check_open(self) -> None:
        # grpc's own error for a closed channel does not say which client; this one does.
        if self._closed:
            raise RuntimeError(f"the {type(self).__name__} is closed")

    def _timeout_of(self, timeout: float | None) -> float | None:
        return self._timeout if timeout is None else _grpc.check_timeout("timeout", timeout)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        token = self._token() if callable(self._token) else self._token
        return _grpc.authorization_metadata(token)

    def _unary(
        self, method: str, call: grpc.UnaryUnaryMultiCallable[Req, Res], request: Req, timeout: float | None
    ) -> Res:
        self._check_open()
        deadline = _grpc.Deadline(timeout)
        # The tenant in the headers too: a flooded service refuses the read from them, before reading it.
        tenant = _grpc.tenant_metadata(request)
        attempt = 1
        while True:
            metadata = self._metadata() + tenant
            try:
                return call(request, timeout=deadline.remaining(method), metadata=metadata)
            except grpc.RpcError as error:
                failure = from_rpc_error(method, error)
                # Busy, and told when to come back: once more after that, within the deadline.
                wait = _grpc.retry_delay(failure, attempt, self._max_attempts, deadline)
                if wait is None:
                    raise failure from error
            time.sleep(wait)
            attempt += 1
