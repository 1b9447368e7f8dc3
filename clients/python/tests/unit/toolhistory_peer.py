"""A real gRPC server on 127.0.0.1 that implements the ToolHistory service with canned answers.

The clients' tests talk to it over the network as they would to the service: it records what each call
carried (request, metadata, deadline) and answers what the test set up.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc

from toolhistory.v1 import toolhistory_pb2, toolhistory_pb2_grpc

if TYPE_CHECKING:
    from collections.abc import Iterator


@dataclass
class ReceivedCall:
    method: str
    request: Any
    metadata: dict[str, str]
    time_remaining: float | None  # None: the caller set no deadline


@dataclass
class Stream:
    """One streaming call's answer: these messages (RecordedEvent for SubscribeToolEvents, ConversationChange for
    WatchConversation), then this status (``None``: stay open until cancelled)."""

    events: list[Any]
    end: tuple[grpc.StatusCode, str] | None = None


@dataclass
class CannedToolHistory(toolhistory_pb2_grpc.ToolHistoryServicer):
    replay: toolhistory_pb2.GetReplayHistoryResponse = field(default_factory=toolhistory_pb2.GetReplayHistoryResponse)
    pages: dict[str, toolhistory_pb2.ListToolInvocationsResponse] = field(default_factory=dict)  # by page_token
    usage: toolhistory_pb2.GetUsageResponse = field(default_factory=toolhistory_pb2.GetUsageResponse)
    search: toolhistory_pb2.SearchToolHistoryResponse = field(default_factory=toolhistory_pb2.SearchToolHistoryResponse)
    erase: toolhistory_pb2.EraseConversationResponse = field(default_factory=toolhistory_pb2.EraseConversationResponse)
    fork: toolhistory_pb2.ForkConversationResponse = field(default_factory=toolhistory_pb2.ForkConversationResponse)
    streams: list[Stream] = field(default_factory=list)  # one per SubscribeToolEvents call, in order
    watches: list[Stream] = field(default_factory=list)  # one per WatchConversation call, in order
    failures: dict[str, tuple[grpc.StatusCode, str]] = field(default_factory=dict)  # method -> status it answers
    hang: set[str] = field(default_factory=set)  # methods that answer only when the caller gives up
    busy: dict[str, list[int | None]] = field(default_factory=dict)  # method -> refusals (their pushback ms), in turn
    calls: list[ReceivedCall] = field(default_factory=list)
    stream_cancelled: threading.Event = field(default_factory=threading.Event)

    def received(self, method: str) -> list[ReceivedCall]:
        return [call for call in self.calls if call.method == method]

    def _answer(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        remaining = context.time_remaining()
        self.calls.append(
            ReceivedCall(
                method=method,
                request=request,
                metadata={item.key: item.value for item in context.invocation_metadata()},  # type: ignore[attr-defined]
                time_remaining=None if remaining is None or remaining > 10**9 else remaining,
            )
        )
        if method in self.hang:
            ended = threading.Event()
            if context.add_callback(ended.set):  # False: the caller has given up already
                ended.wait(timeout=60)
        if self.busy.get(method):
            pushback = self.busy[method].pop(0)
            if pushback is not None:
                context.set_trailing_metadata((("grpc-retry-pushback-ms", str(pushback)),))
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "server busy (replay reads)")
        if method in self.failures:
            code, details = self.failures[method]
            context.abort(code, details)

    def GetReplayHistory(self, request: Any, context: Any) -> toolhistory_pb2.GetReplayHistoryResponse:
        self._answer("GetReplayHistory", request, context)
        return self.replay

    def ListToolInvocations(self, request: Any, context: Any) -> toolhistory_pb2.ListToolInvocationsResponse:
        self._answer("ListToolInvocations", request, context)
        return self.pages[request.page_token]

    def GetUsage(self, request: Any, context: Any) -> toolhistory_pb2.GetUsageResponse:
        self._answer("GetUsage", request, context)
        return self.usage

    def SearchToolHistory(self, request: Any, context: Any) -> toolhistory_pb2.SearchToolHistoryResponse:
        self._answer("SearchToolHistory", request, context)
        return self.search

    def EraseConversation(self, request: Any, context: Any) -> toolhistory_pb2.EraseConversationResponse:
        self._answer("EraseConversation", request, context)
        return self.erase

    def ForkConversation(self, request: Any, context: Any) -> toolhistory_pb2.ForkConversationResponse:
        self._answer("ForkConversation", request, context)
        return self.fork

    def SubscribeToolEvents(self, request: Any, context: Any) -> Iterator[toolhistory_pb2.RecordedEvent]:
        self._answer("SubscribeToolEvents", request, context)
        yield from self._stream(self.streams[len(self.received("SubscribeToolEvents")) - 1], context)

    def WatchConversation(self, request: Any, context: Any) -> Iterator[toolhistory_pb2.ConversationChange]:
        self._answer("WatchConversation", request, context)
        yield from self._stream(self.watches[len(self.received("WatchConversation")) - 1], context)

    def _stream(self, stream: Stream, context: Any) -> Iterator[Any]:
        if stream.end is None:
            # Registered first: the caller may cancel while the events are still being sent.
            context.add_callback(self.stream_cancelled.set)
        yield from stream.events
        if stream.end is not None:
            context.abort(*stream.end)
        ended = threading.Event()
        if context.add_callback(ended.set):  # False: the call has ended already
            ended.wait(timeout=60)


def recorded(position: int, event_type: str = "ToolCallRequested", **payload: Any) -> toolhistory_pb2.RecordedEvent:
    """A RecordedEvent at ``position`` whose payload is ``{"type": event_type, **payload}``."""
    import json

    event = toolhistory_pb2.RecordedEvent(
        position=position,
        event_id=f"event-{position}",
        type=event_type,
        tenant_id="t1",
        conversation_id="c1",
        run_id="r1",
        payload_json=json.dumps({"type": event_type, **payload}),
        stream_position=position,
    )
    event.occurred_at.FromSeconds(1_700_000_000 + position)
    event.recorded_at.FromSeconds(1_700_000_001 + position)
    return event


def watched(tool_call_id: str, result: str = "") -> toolhistory_pb2.WatchedInvocation:
    """A WatchedInvocation of conversation c1: pending without ``result``, answered with one."""
    return toolhistory_pb2.WatchedInvocation(
        invocation=toolhistory_pb2.Invocation(
            tenant_id="t1", conversation_id="c1", run_id="r1", tool_call_id=tool_call_id, result=result
        ),
        run_status=toolhistory_pb2.RUN_STATUS_RUNNING,
    )


def watch_changes() -> list[toolhistory_pb2.ConversationChange]:
    """A watch's messages: a snapshot in two parts, a call pending, its result, the run's end."""
    change = toolhistory_pb2.ConversationChange
    return [
        change(snapshot=toolhistory_pb2.ConversationSnapshot(invocations=[watched("call_1", "done")])),
        change(snapshot=toolhistory_pb2.ConversationSnapshot(complete=True)),
        change(
            invocation_changed=toolhistory_pb2.InvocationChanged(
                position=7, event_type="ToolCallRequested", invocation=watched("call_2")
            )
        ),
        change(
            invocation_changed=toolhistory_pb2.InvocationChanged(
                position=8, event_type="ToolResultReceived", invocation=watched("call_2", "ok")
            )
        ),
        change(
            run_ended=toolhistory_pb2.RunEnded(position=9, run_id="r1", status=toolhistory_pb2.RUN_STATUS_COMPLETED)
        ),
    ]


@contextmanager
def serving(service: CannedToolHistory, credentials: grpc.ServerCredentials | None = None) -> Iterator[str]:
    """Serves ``service`` on a free port of 127.0.0.1; yields its address."""
    server = grpc.server(ThreadPoolExecutor(max_workers=8))
    toolhistory_pb2_grpc.add_ToolHistoryServicer_to_server(service, server)
    port = (
        server.add_insecure_port("127.0.0.1:0")
        if credentials is None
        else server.add_secure_port("127.0.0.1:0", credentials)
    )
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)
