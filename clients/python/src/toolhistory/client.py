"""The ToolHistory gRPC API, blocking: ``ToolHistoryClient``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from toolhistory import _grpc
from toolhistory._grpc import (
    DEFAULT_TIMEOUT,
    HistoryView,
    InvocationStatusFilter,
    SearchMatch,
    StaleResults,
    SubscribedEvent,
    TlsConfig,
    TokenSource,
    UsageBucket,
)
from toolhistory._sync_calls import SyncCalls
from toolhistory.formats import HistoryFormat
from toolhistory.replay import ReplayHistory, replay_history_of
from toolhistory.splice import default_id_of, host_branch, splice_history
from toolhistory.v1 import toolhistory_pb2_grpc

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Sequence
    from datetime import datetime
    from types import TracebackType

    from toolhistory.v1 import toolhistory_pb2

__all__ = [
    "DEFAULT_TIMEOUT",
    "HistoryFormat",
    "HistoryView",
    "InvocationStatusFilter",
    "StaleResults",
    "SubscribedEvent",
    "TlsConfig",
    "TokenSource",
    "ToolHistoryClient",
    "UsageBucket",
]

Req = TypeVar("Req")
Res = TypeVar("Res")
H = TypeVar("H")


class ToolHistoryClient(SyncCalls):
    """The ToolHistory gRPC API for agent workers, audit and billing, blocking.

    Typed requests and responses (generated from the proto), a bearer token on every call, a deadline on
    every unary call, and ``ToolHistoryError`` with the gRPC status for every failure. Use it as a context
    manager, or call ``close()``. A client is safe to share between threads.

    A method raises ``ValueError`` when an argument is wrong (the message names it), before anything is sent. Reads
    of a conversation take ``consistency_token``: what publishing answered (``PublishedEvent.consistency_token``). The
    answer includes every event through it, or the call fails ``UNAVAILABLE`` before its deadline, never an answer
    that silently lacks them (``INVALID_ARGUMENT``: a malformed token). Default: the last token this process published
    for the conversation (``last_consistency_token``); ``""``: none, no wait.

    Args:
        address: the service's gRPC target, e.g. ``"toolhistory:50051"``.
        token: a bearer token, or a function that returns a current one; called before every call, so it
            may refresh. Sent as ``authorization: Bearer <token>``.
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
        token: TokenSource | None = None,
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
            grpc.insecure_channel(setup.address, options=setup.options)
            if setup.credentials is None
            else grpc.secure_channel(setup.address, setup.credentials, options=setup.options)
        )
        self._stub = toolhistory_pb2_grpc.ToolHistoryStub(self._channel)

    def __enter__(self) -> ToolHistoryClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Closes the channel; calls in flight end CANCELLED. Closing again does nothing."""
        self._closed = True
        self._channel.close()

    def get_replay_history(
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
        """The tool-call history the model may see again, in ``format``, with every omission explained (see the class
        for ``consistency_token`` and errors; ``DEADLINE_EXCEEDED``: it was not ready in time, go on without it).

        Args:
            format: whose API's messages each turn carries (``HISTORY_FORMATS``): ``"openai"`` (chat completions),
                ``"anthropic"``, ``"openai-responses"``, ``"gemini"`` or ``"bedrock-converse"``.
            channel: the channel whose policy applies; default: the one recorded for the conversation.
            as_of: the moment to replay at (an aware datetime); default: now.
            freshness_window_seconds: replaces every configured freshness window for this request.
            stale_results: ``"placeholder"`` keeps a stale pair and says the result expired; ``"drop"`` leaves
                it out; default: as the policy says.
            view: ``"all"`` (default): each turn's messages and structured rounds; ``"messages"``: the messages
                only, about half the bytes; ``"structured"``: the rounds only.
            max_history_tokens: the most tokens (o200k_base) the replayed calls and results may take; over it,
                whole rounds leave, oldest first. Default: the policy's budget, if any.
            branch_message_ids: the host's current path of message ids, oldest first (``host_branch`` makes it):
                runs whose answer was regenerated, or that followed an edited message, are left out
                (``OMISSION_REASON_OFF_BRANCH``). Default: every run counts.
            model: the model the host is about to call: a round's reasoning recorded for another model is left out
                (its ``Round.reasoning_omitted`` says ``REASONING_OMISSION_OTHER_MODEL``). Default: any model of the
                format's provider.
            provider: the provider the host is about to call (``openai``, ``anthropic``, ``google``, ``bedrock``, ...),
                for the ``"openai"`` format, which names none; the service refuses any other than the format's own.
            timeout: this call's deadline in seconds; default: the client's.
        """
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
        response = self._unary("GetReplayHistory", self._stub.GetReplayHistory, request, self._timeout_of(timeout))
        return replay_history_of(response, format)

    def spliced_history(
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
        """The host's messages with the replayed tool history spliced in where the model saw it
        (``splice_history``), for the host's current branch: the ids of ``host_messages`` are sent as
        ``branch_message_ids`` (``host_branch``), so the runs of a regenerated answer or of an edited message
        stay out.

        Args:
            host_messages: the host's conversation as it stands, oldest first.
            id_of: the host's id of one of its messages, ``None`` when it has none; default: a mapping's ``"id"``
                or an object's ``id`` attribute.
            the others: as ``get_replay_history``'s (the same default consistency token).
        """
        history = self.get_replay_history(
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
    ) -> Generator[toolhistory_pb2.Invocation, None, None]:
        """Every recorded invocation that matches, page after page, in the service's stable order.

        Each carries its approval, the sizes its payloads had before the producer cut them and the run
        that recorded its result when later than the call's. Pages are fetched as the iteration reaches
        them.

        Args:
            tenant_id: the tenant.
            conversation_id, run_id, tool_name: optional filters.
            status: ``"pending"``, ``"succeeded"`` or ``"error"``; default: any.
            from_: inclusive, and ``to``: exclusive, on the invocation's time (aware datetimes).
            page_size: invocations fetched per request; default 100, at most 1,000.
            consistency_token: as the class says (default with ``conversation_id``: this process's last token for
                the conversation; without: none).
            timeout: each page's deadline in seconds; default: the client's.

        Raises:
            ValueError: an argument is wrong; raised here, before any page is asked for.
            ToolHistoryError: a page's call failed (raised by the iteration).
        """
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

    def _invocation_pages(
        self, request: toolhistory_pb2.ListToolInvocationsRequest, timeout: float | None
    ) -> Generator[toolhistory_pb2.Invocation, None, None]:
        while True:
            page = self._unary("ListToolInvocations", self._stub.ListToolInvocations, request, timeout)
            yield from page.invocations
            if not page.next_page_token:
                return
            request.page_token = page.next_page_token

    def get_usage(
        self,
        *,
        tenant_id: str,
        from_: datetime,
        to: datetime,
        bucket: UsageBucket = "hour",
        timeout: float | None = None,
    ) -> toolhistory_pb2.GetUsageResponse:
        """Calls, errors and durations per tool and bucket (``"hour"`` or ``"day"``), and the tokens of the runs
        that ended in the period ``[from_, to)``."""
        request = _grpc.usage_request(tenant_id=tenant_id, from_=from_, to=to, bucket=bucket)
        return self._unary("GetUsage", self._stub.GetUsage, request, self._timeout_of(timeout))

    def search_tool_history(
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
        """Search over the tenant's (redacted) tool history: by words, best first, or by substring, newest first.

        ``match="words"``: ``query`` is free text as in a web search box (every word, ``"a phrase"``, ``-word``,
        ``or``); ``match="substring"``: one literal text (3+ characters) anywhere, in any case. Each hit's
        ``matched_in`` says where it matched. ``conversation_id`` is required for a history:read token;
        ``limit``: hits, default 20, at most 100; ``from_``/``to`` on the invocation's time.
        ``consistency_token``: as the class says (default with ``conversation_id``: this process's last token for the
        conversation; the search waits until its index has the token's calls and results).
        """
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
        return self._unary("SearchToolHistory", self._stub.SearchToolHistory, request, self._timeout_of(timeout))

    def erase_conversation(
        self, *, tenant_id: str, conversation_id: str, timeout: float | None = None
    ) -> toolhistory_pb2.EraseConversationResponse:
        """Removes a conversation from the event store and the read model; a tombstone keeps it from coming back.

        ``timeout`` defaults to the client's, but at least 30 s.
        """
        request = _grpc.erase_request(tenant_id=tenant_id, conversation_id=conversation_id)
        return self._unary(
            "EraseConversation",
            self._stub.EraseConversation,
            request,
            _grpc.erase_timeout(timeout, self._timeout),
        )

    def fork_conversation(
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
        ``up_to_message_id`` (a user or an assistant message of it), for a host that branches a chat: the
        copied invocations name their origin (``Invocation.forked_from``); the source is unchanged. Repeating
        a fork answers the same fork.

        The fork is made once the source's events through ``consistency_token`` are recorded (default: the last
        token this process published for the source; ``""``: none). This process's reads of the new conversation
        wait for the whole fork; elsewhere, pass the answer's ``consistency_token``. Needs the scope
        ``conversations:fork``. ``timeout`` defaults to the client's, but
        at least 30 s.

        Raises:
            ToolHistoryError: ``NOT_FOUND`` (no such message in the source), ``ALREADY_EXISTS``
                (``new_conversation_id`` holds something else), ``PERMISSION_DENIED``, ...
        """
        request = _grpc.fork_request(
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            up_to_message_id=up_to_message_id,
            new_conversation_id=new_conversation_id,
            consistency_token=consistency_token,
        )
        response = self._unary(
            "ForkConversation", self._stub.ForkConversation, request, _grpc.erase_timeout(timeout, self._timeout)
        )
        _grpc.remember_fork(request, response)
        return response
