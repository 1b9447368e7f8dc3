"""AsyncToolHistoryClient against a real gRPC server on 127.0.0.1 that answers canned responses."""

from __future__ import annotations

import asyncio
import itertools
import json
from contextlib import aclosing
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import grpc
import pytest

from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.consistency import last_consistency_token, remember_consistency_token
from toolhistory.errors import ToolHistoryError
from toolhistory.v1 import toolhistory_pb2 as pb

from toolhistory_peer import CannedToolHistory, Stream, recorded, serving, watch_changes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

FROM = datetime(2026, 3, 1, tzinfo=timezone.utc)
TO = datetime(2026, 3, 2, tzinfo=timezone.utc)


@pytest.fixture
def service() -> CannedToolHistory:
    return CannedToolHistory()


@pytest.fixture
def address(service: CannedToolHistory) -> Iterator[str]:
    with serving(service) as address:
        yield address


@pytest.fixture
async def client(address: str) -> AsyncIterator[AsyncToolHistoryClient]:
    async with AsyncToolHistoryClient(address, token="static-token") as client:
        yield client


async def test_replay_sends_the_request_and_parses_the_messages(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    contents = [
        {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "lookup", "args": {"q": 1}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "lookup", "response": {"a": 2}}}]},
    ]
    service.replay = pb.GetReplayHistoryResponse(
        turns=[pb.Turn(run_id="r1", assistant_message_id="a1", messages_json=json.dumps(contents))]
    )
    history = await client.get_replay_history(
        tenant_id="t1",
        conversation_id="c1",
        format="gemini",
        channel="web",
        freshness_window_seconds=60,
        model="gemini-3-pro",
        provider="google",
    )
    assert history.messages() == contents
    [call] = service.received("GetReplayHistory")
    assert call.request == pb.GetReplayHistoryRequest(
        tenant_id="t1",
        conversation_id="c1",
        channel="web",
        format=pb.HISTORY_FORMAT_GEMINI,
        freshness_window_seconds=60,
        model="gemini-3-pro",
        provider="google",
    )
    assert call.metadata["authorization"] == "Bearer static-token"


async def test_lists_invocations_following_every_page_token(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.pages = {
        "": pb.ListToolInvocationsResponse(invocations=[pb.Invocation(tool_call_id="1")], next_page_token="p2"),
        "p2": pb.ListToolInvocationsResponse(invocations=[pb.Invocation(tool_call_id="2")]),
    }
    ids = [i.tool_call_id async for i in client.list_tool_invocations(tenant_id="t1", run_id="r1")]
    assert ids == ["1", "2"]
    assert [(c.request.page_token, c.request.run_id) for c in service.received("ListToolInvocations")] == [
        ("", "r1"),
        ("p2", "r1"),
    ]


async def test_usage_search_and_erasure(service: CannedToolHistory, client: AsyncToolHistoryClient) -> None:
    service.usage = pb.GetUsageResponse(output_tokens=7)
    service.search = pb.SearchToolHistoryResponse(hits=[pb.SearchHit(score=0.25, snippet="**x**")])
    service.erase = pb.EraseConversationResponse(erased_events=1)
    assert await client.get_usage(tenant_id="t1", from_=FROM, to=TO) == service.usage
    assert await client.search_tool_history(tenant_id="t1", query="x", conversation_id="c1") == service.search
    assert await client.erase_conversation(tenant_id="t1", conversation_id="c1") == service.erase
    assert service.received("GetUsage")[0].request.bucket == pb.USAGE_BUCKET_HOUR


@pytest.mark.parametrize("kind", ["plain", "async"])
async def test_fetches_a_token_from_its_source_before_every_call(
    service: CannedToolHistory, address: str, kind: str
) -> None:
    rotation = itertools.count(1)

    def plain() -> str:
        return f"token-{next(rotation)}"

    async def from_provider() -> str:
        await asyncio.sleep(0)  # an identity provider answers asynchronously
        return plain()

    async with AsyncToolHistoryClient(address, token=plain if kind == "plain" else from_provider) as client:
        await client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        await client.get_usage(tenant_id="t1", from_=FROM, to=TO)
        service.streams = [Stream([recorded(1)])]
        async with aclosing(client.subscribe(tenant_id="t1")) as events:
            await anext(events)
    assert [c.metadata["authorization"] for c in service.calls] == [
        "Bearer token-1",
        "Bearer token-2",
        "Bearer token-3",
    ]


async def test_a_token_not_fetched_before_the_deadline_is_deadline_exceeded(
    service: CannedToolHistory, address: str
) -> None:
    never = asyncio.Event()

    async def stuck() -> str:
        await never.wait()
        return "never"

    async with AsyncToolHistoryClient(address, token=stuck, timeout=0.2) as client:
        with pytest.raises(ToolHistoryError) as raised:
            await client.get_replay_history(tenant_id="t1", conversation_id="c1")
    assert (raised.value.code, raised.value.method, raised.value.retriable) == (
        grpc.StatusCode.DEADLINE_EXCEEDED,
        "GetReplayHistory",
        True,
    )
    assert service.calls == []


async def test_a_call_past_its_deadline_is_deadline_exceeded(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.hang.add("GetUsage")
    with pytest.raises(ToolHistoryError) as raised:
        await client.get_usage(tenant_id="t1", from_=FROM, to=TO, timeout=0.2)
    assert raised.value.code is grpc.StatusCode.DEADLINE_EXCEEDED
    assert 0 < service.calls[0].time_remaining <= 0.5  # type: ignore[operator]


async def test_tries_a_busy_refusal_again_after_its_pushback(service: CannedToolHistory, address: str) -> None:
    service.busy["GetReplayHistory"] = [50, 50]
    async with AsyncToolHistoryClient(address) as client:
        started = asyncio.get_running_loop().time()
        await client.get_replay_history(tenant_id="t1", conversation_id="c1")
        elapsed = asyncio.get_running_loop().time() - started
    assert len(service.received("GetReplayHistory")) == 3
    assert elapsed >= 0.1


async def test_gives_up_on_a_busy_refusal_it_cannot_wait_for(service: CannedToolHistory, address: str) -> None:
    service.busy["GetReplayHistory"] = [2000]
    async with AsyncToolHistoryClient(address) as client:
        with pytest.raises(ToolHistoryError) as raised:
            await client.get_replay_history(tenant_id="t1", conversation_id="c1", timeout=0.5)
    assert (raised.value.status, raised.value.retry_after_ms) == ("RESOURCE_EXHAUSTED", 2000)
    assert len(service.received("GetReplayHistory")) == 1


async def test_every_failure_is_a_tool_history_error(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.failures["EraseConversation"] = (grpc.StatusCode.UNAUTHENTICATED, "the token has expired")
    with pytest.raises(ToolHistoryError) as raised:
        await client.erase_conversation(tenant_id="t1", conversation_id="c1")
    error = raised.value
    assert (error.code, error.status, error.details, error.method, error.retriable) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "the token has expired",
        "EraseConversation",
        False,
    )
    assert isinstance(error.__cause__, grpc.RpcError)


async def test_subscribe_resumes_after_the_last_event_on_unavailable(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.streams = [
        Stream([recorded(1)], end=(grpc.StatusCode.UNAVAILABLE, "resume from your last position")),
        Stream([recorded(2), recorded(3, "RunCompleted")]),
    ]
    received = []
    async with aclosing(client.subscribe(tenant_id="t1", reconnect=True)) as events:
        async for event in events:
            received.append((event.position, event.type, event.event["type"]))
            if event.type == "RunCompleted":
                break
    assert received == [
        (1, "ToolCallRequested", "ToolCallRequested"),
        (2, "ToolCallRequested", "ToolCallRequested"),
        (3, "RunCompleted", "RunCompleted"),
    ]
    assert [c.request.from_position for c in service.received("SubscribeToolEvents")] == [0, 1]
    # Closing the iterator ended the server's stream.
    assert await asyncio.to_thread(service.stream_cancelled.wait, 10)


async def test_subscribe_raises_what_it_does_not_reconnect_on(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.streams = [Stream([], end=(grpc.StatusCode.INVALID_ARGUMENT, 'unknown event type "Nope"'))]
    with pytest.raises(ToolHistoryError, match='SubscribeToolEvents: INVALID_ARGUMENT: unknown event type "Nope"'):
        async for _ in client.subscribe(tenant_id="t1", types=["Nope"]):
            pass


async def test_watch_delivers_the_snapshot_then_each_change_and_erasure_ends_it_not_found(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.watches = [Stream(watch_changes(), end=(grpc.StatusCode.NOT_FOUND, "conversation c1 was erased"))]
    received: list[str | None] = []

    async def watch() -> None:
        async for change in client.watch_conversation(tenant_id="t1", conversation_id="c1"):
            received.append(change.WhichOneof("change"))

    with pytest.raises(ToolHistoryError) as raised:
        await watch()
    assert received == ["snapshot", "snapshot", "invocation_changed", "invocation_changed", "run_ended"]
    assert (raised.value.code, raised.value.method) == (grpc.StatusCode.NOT_FOUND, "WatchConversation")
    [call] = service.received("WatchConversation")
    assert (call.request.conversation_id, call.metadata["authorization"], call.time_remaining) == (
        "c1",
        "Bearer static-token",
        None,
    )


async def test_watch_ends_the_servers_stream_when_the_caller_stops(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.watches = [Stream(watch_changes())]
    async with aclosing(client.watch_conversation(tenant_id="t1", conversation_id="c1")) as changes:
        async for change in changes:
            if change.WhichOneof("change") == "run_ended":
                break
    assert await asyncio.to_thread(service.stream_cancelled.wait, 10)


async def test_a_closed_client_says_so(address: str) -> None:
    client = AsyncToolHistoryClient(address)
    await client.close()
    with pytest.raises(RuntimeError, match="the AsyncToolHistoryClient is closed"):
        await client.get_usage(tenant_id="t1", from_=FROM, to=TO)


async def test_every_read_of_a_conversation_sends_the_last_token_published_for_it_or_the_callers(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:1:5")
    service.pages = {"": pb.ListToolInvocationsResponse()}
    service.watches = [Stream([], end=(grpc.StatusCode.UNAVAILABLE, "going away"))]
    await client.get_replay_history(tenant_id="t1", conversation_id="c1", branch_message_ids=["u1", "a1"])
    [_ async for _ in client.list_tool_invocations(tenant_id="t1", conversation_id="c1")]
    await client.search_tool_history(tenant_id="t1", query="x", conversation_id="c1")
    with pytest.raises(ToolHistoryError):
        [_ async for _ in client.watch_conversation(tenant_id="t1", conversation_id="c1")]
    await client.get_replay_history(tenant_id="t1", conversation_id="c1", consistency_token="")
    await client.search_tool_history(tenant_id="t1", query="x", consistency_token="ct1:p:2")
    assert [(call.method, call.request.consistency_token) for call in service.calls] == [
        ("GetReplayHistory", "ct1:k:agent.tool-events:1:5"),
        ("ListToolInvocations", "ct1:k:agent.tool-events:1:5"),
        ("SearchToolHistory", "ct1:k:agent.tool-events:1:5"),
        ("WatchConversation", "ct1:k:agent.tool-events:1:5"),
        ("GetReplayHistory", ""),
        ("SearchToolHistory", "ct1:p:2"),
    ]
    assert list(service.calls[0].request.branch_message_ids) == ["u1", "a1"]


async def test_spliced_history_asks_for_the_hosts_branch_and_splices_it(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.replay = pb.GetReplayHistoryResponse(
        turns=[pb.Turn(run_id="r1", assistant_message_id="a1", messages_json=json.dumps(["call", "result"]))]
    )
    host = [{"id": "u1"}, {"id": "a1"}, {"id": "u1"}]
    spliced = await client.spliced_history(tenant_id="t1", conversation_id="c1", host_messages=host)
    assert spliced == [{"id": "u1"}, "call", "result", {"id": "a1"}, {"id": "u1"}]
    assert list(service.received("GetReplayHistory")[0].request.branch_message_ids) == ["u1", "a1"]


async def test_spliced_history_sends_the_model_and_provider_about_to_be_called(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    await client.spliced_history(
        tenant_id="t1", conversation_id="c1", host_messages=[], model="o4-mini", provider="openai"
    )
    request = service.received("GetReplayHistory")[0].request
    assert (request.model, request.provider) == ("o4-mini", "openai")


async def test_fork_remembers_the_forks_token_for_the_new_conversation(
    service: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service.fork = pb.ForkConversationResponse(copied_invocations=2, consistency_token="ct1:p:77")
    answer = await client.fork_conversation(
        tenant_id="t1",
        conversation_id="c1",
        up_to_message_id="u3",
        new_conversation_id="c9",
        consistency_token="ct1:p:5",
    )
    assert answer.copied_invocations == 2
    assert service.received("ForkConversation")[0].request == pb.ForkConversationRequest(
        tenant_id="t1",
        conversation_id="c1",
        up_to_message_id="u3",
        new_conversation_id="c9",
        consistency_token="ct1:p:5",
    )
    assert last_consistency_token("t1", "c9") == "ct1:p:77"
    await client.get_replay_history(tenant_id="t1", conversation_id="c9")
    assert service.received("GetReplayHistory")[0].request.consistency_token == "ct1:p:77"
