"""The gRPC clients against the running service: a run published through the broker, then every RPC."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
import pytest

from toolhistory.client import ToolHistoryClient
from toolhistory.errors import ToolHistoryError
from toolhistory.formats import (
    AnthropicAssistantMessage,
    AnthropicToolResultMessage,
    BedrockAssistantMessage,
    BedrockToolResultMessage,
    GeminiModelContent,
    GeminiUserContent,
    OpenAiAssistantToolCallMessage,
    OpenAiResponsesFunctionCall,
    OpenAiResponsesFunctionCallOutput,
    OpenAiToolMessage,
)
from toolhistory.v1 import toolhistory_pb2 as pb

from conftest import Stack, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolhistory.aio import AsyncToolHistoryClient

pytestmark = pytest.mark.integration

CHANNEL = "support"
DERIVED_ID = re.compile(r"^call_[0-9a-f]{26}$")
T = TypeVar("T")


@dataclass(frozen=True)
class PublishedRun:
    tenant_id: str
    conversation_id: str
    run_id: str


@pytest.fixture
def tenant(stack: Stack) -> str:
    # The token may read this tenant only.
    return stack.tenant


@pytest.fixture
def run(
    publisher: Any, client: ToolHistoryClient, ids: Callable[[str], str], tenant: str, replayed: Any
) -> PublishedRun:
    """One completed run of a round of two parallel calls: get_weather answers, the call the LLM gave no id fails."""
    from toolhistory.events import TokenUsage

    published = PublishedRun(tenant, ids("conv"), ids("run"))
    recorder = publisher.run(
        tenant_id=tenant,
        conversation_id=published.conversation_id,
        channel=CHANNEL,
        run_id=published.run_id,
        user_message_id="u1",
    )
    recorder.tool_call(
        round_index=0,
        sequence_index=0,
        tool_call_id="call_weather",
        tool_name="get_weather",
        arguments={"city": "Oslo"},
    )
    recorder.tool_call(
        round_index=0, sequence_index=1, tool_call_id="", tool_name="get_time", arguments={"zone": "Europe/Oslo"}
    )
    recorder.tool_result(round_index=0, sequence_index=1, tool_call_id="", result="clock unavailable", is_error=True)
    recorder.tool_result(round_index=0, sequence_index=0, tool_call_id="call_weather", result={"tempC": -3})
    recorder.complete(assistant_message_id="a1", usage=[TokenUsage(input_tokens=120, output_tokens=30, model="m")])
    replayed(client, published.conversation_id, "openai", until=lambda h: len(h.turns) == 1)
    return published


def keys_match(message: dict[str, Any], *shapes: Any) -> bool:
    """Whether the message has exactly the keys of one of the format's TypedDicts."""
    return any(set(message) == shape.__required_keys__ for shape in shapes)


def test_replays_the_run_in_every_format(client: ToolHistoryClient, run: PublishedRun) -> None:
    def history(format: Any) -> list[Any]:
        replay = client.get_replay_history(tenant_id=run.tenant_id, conversation_id=run.conversation_id, format=format)
        assert [(t.run_id, t.assistant_message_id, t.after_message_id) for t in replay.turns] == [
            (run.run_id, "a1", "u1")
        ]
        assert replay.omitted == []
        assert replay.history_tokens > 0
        assert replay.turns[0].messages == replay.messages()
        return replay.messages()

    # OpenAI chat: an assistant message with both calls, then a tool message per call.
    calls, weather, clock = history("openai")
    assert keys_match(calls, OpenAiAssistantToolCallMessage)
    assert keys_match(weather, OpenAiToolMessage)
    assert keys_match(clock, OpenAiToolMessage)
    assert calls["role"] == "assistant"
    assert calls["content"] is None
    first, second = calls["tool_calls"]
    assert (first["id"], first["function"]["name"]) == ("call_weather", "get_weather")
    assert json.loads(first["function"]["arguments"]) == {"city": "Oslo"}
    # The call the LLM gave no id gets a derived one, the same in the call and its result.
    derived = second["id"]
    assert DERIVED_ID.match(derived)
    assert json.loads(second["function"]["arguments"]) == {"zone": "Europe/Oslo"}
    assert (weather["tool_call_id"], json.loads(weather["content"])) == ("call_weather", {"tempC": -3})
    assert clock == {"role": "tool", "tool_call_id": derived, "content": "clock unavailable"}

    # Anthropic: tool_use blocks, then one user message of both tool_result blocks.
    uses, results = history("anthropic")
    assert keys_match(uses, AnthropicAssistantMessage)
    assert keys_match(results, AnthropicToolResultMessage)
    assert [(b["type"], b["name"], b["input"]) for b in uses["content"]] == [
        ("tool_use", "get_weather", {"city": "Oslo"}),
        ("tool_use", "get_time", {"zone": "Europe/Oslo"}),
    ]
    assert [(b["tool_use_id"], b["is_error"]) for b in results["content"]] == [
        (uses["content"][0]["id"], False),
        (uses["content"][1]["id"], True),
    ]
    assert results["content"][1]["content"] == "clock unavailable"

    # OpenAI Responses: the function_call items, then the function_call_output items; an error is marked.
    items = history("openai-responses")
    assert [item["type"] for item in items] == [
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert all(keys_match(i, OpenAiResponsesFunctionCall, OpenAiResponsesFunctionCallOutput) for i in items)
    assert [i["call_id"] for i in items] == ["call_weather", derived, "call_weather", derived]
    assert items[3]["output"] == "[error] clock unavailable"

    # Gemini: a model content of functionCall parts, then a user content of functionResponse parts.
    model, answers = history("gemini")
    assert keys_match(model, GeminiModelContent)
    assert keys_match(answers, GeminiUserContent)
    assert [p["functionCall"]["args"] for p in model["parts"]] == [{"city": "Oslo"}, {"zone": "Europe/Oslo"}]
    assert [p["functionResponse"]["response"] for p in answers["parts"]] == [
        {"tempC": -3},
        {"error": "clock unavailable"},
    ]

    # Bedrock Converse: toolUse blocks, then toolResult blocks (json for the JSON result, text for the error).
    asked, answered = history("bedrock-converse")
    assert keys_match(asked, BedrockAssistantMessage)
    assert keys_match(answered, BedrockToolResultMessage)
    assert [(r["toolResult"]["content"], r["toolResult"]["status"]) for r in answered["content"]] == [
        ([{"json": {"tempC": -3}}], "success"),
        ([{"text": "clock unavailable"}], "error"),
    ]


def test_views_carry_the_messages_or_the_rounds(client: ToolHistoryClient, run: PublishedRun) -> None:
    def replay(view: Any) -> Any:
        return client.get_replay_history(tenant_id=run.tenant_id, conversation_id=run.conversation_id, view=view)

    full, messages_only, structured = replay("all"), replay("messages"), replay("structured")
    assert messages_only.messages() == full.messages()
    assert messages_only.turns[0].rounds == []
    assert structured.messages() == []
    assert structured.turns[0].rounds == full.turns[0].rounds
    [round_] = full.turns[0].rounds
    assert [(c.tool_name, c.is_error) for c in round_.calls] == [("get_weather", False), ("get_time", True)]
    none = client.get_replay_history(tenant_id=run.tenant_id, conversation_id=run.conversation_id, max_history_tokens=0)
    assert (none.messages(), none.history_tokens) == ([], 0)
    assert {o.reason for o in none.omitted} == {pb.OMISSION_REASON_TOKEN_BUDGET}


def test_lists_counts_and_finds_the_invocations(client: ToolHistoryClient, run: PublishedRun) -> None:
    invocations = list(
        client.list_tool_invocations(tenant_id=run.tenant_id, conversation_id=run.conversation_id, page_size=1)
    )
    assert sorted((i.tool_name, i.status, i.is_error) for i in invocations) == [
        ("get_time", pb.INVOCATION_STATUS_ERROR, True),
        ("get_weather", pb.INVOCATION_STATUS_SUCCEEDED, False),
    ]
    errors = list(
        client.list_tool_invocations(tenant_id=run.tenant_id, conversation_id=run.conversation_id, status="error")
    )
    assert [i.tool_name for i in errors] == ["get_time"]

    now = datetime.now(timezone.utc)
    usage = client.get_usage(tenant_id=run.tenant_id, from_=now - timedelta(hours=2), to=now + timedelta(hours=1))
    calls = {row.tool_name: row.calls for row in usage.rows}
    assert calls.get("get_weather", 0) >= 1
    assert calls.get("get_time", 0) >= 1
    assert usage.input_tokens >= 120
    assert usage.output_tokens >= 30

    found = wait_for(
        "the weather call found by its arguments",
        lambda: client.search_tool_history(tenant_id=run.tenant_id, query="city", conversation_id=run.conversation_id),
        lambda answer: len(answer.hits) > 0,
    )
    [hit] = found.hits
    assert (hit.invocation.tool_name, hit.invocation.tool_call_id) == ("get_weather", "call_weather")
    assert 0 <= hit.score < 1
    assert "**city**" in hit.snippet


def test_a_history_reader_searches_its_conversation_by_substring_but_not_the_tenant(
    stack: Stack, run: PublishedRun
) -> None:
    with ToolHistoryClient(stack.address, token=stack.history_reader_token, tls=stack.tls or False) as reader:

        def search(query: str) -> pb.SearchToolHistoryResponse:
            return reader.search_tool_history(
                tenant_id=run.tenant_id, conversation_id=run.conversation_id, query=query, match="substring"
            )

        # Inside a key, in another case: the weather call's result {"tempC": -3}.
        found = wait_for("the weather result found by a substring", lambda: search("TEMP"), lambda a: len(a.hits) > 0)
        [hit] = found.hits
        assert (hit.invocation.tool_name, hit.invocation.tool_call_id) == ("get_weather", "call_weather")
        assert list(hit.matched_in) == [pb.SEARCH_HIT_FIELD_RESULT]
        assert (hit.score, "**temp**C" in hit.snippet) == (0, True)
        # Across a word's edge in the arguments, "/" literal: the clock call's {"zone": "Europe/Oslo"}.
        [clock] = search("e/Osl").hits
        assert (clock.invocation.tool_name, list(clock.matched_in)) == ("get_time", [pb.SEARCH_HIT_FIELD_ARGUMENTS])
        # "%" is a literal character, not a wildcard: nothing holds it.
        assert search("O%o").hits == []

        with pytest.raises(ToolHistoryError) as whole_tenant:
            reader.search_tool_history(tenant_id=run.tenant_id, query="TEMP", match="substring")
        assert whole_tenant.value.status == "PERMISSION_DENIED"
        assert "conversation_id" in whole_tenant.value.details


def test_subscribe_delivers_the_runs_events_up_to_its_completion(client: ToolHistoryClient, run: PublishedRun) -> None:
    seen = []
    for recorded in client.subscribe(tenant_id=run.tenant_id):
        if recorded.conversation_id != run.conversation_id:
            continue
        seen.append(recorded)
        if recorded.type == "RunCompleted":
            break
    assert [e.type for e in seen] == [
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolResultReceived",
        "RunCompleted",
    ]
    assert all(e.event["type"] == e.type and e.event["conversationId"] == run.conversation_id for e in seen)
    positions = [e.position for e in seen]
    assert positions == sorted(positions)
    # Resuming after a position delivers what follows it, nothing before.
    resumed = client.subscribe(tenant_id=run.tenant_id, from_position=positions[-2], types=["RunCompleted"])
    next_completion = next(e for e in resumed if e.conversation_id == run.conversation_id)
    resumed.close()
    assert next_completion.position == positions[-1]


def test_watch_sees_the_conversation_then_a_call_pending_then_its_result_until_erasure(
    client: ToolHistoryClient, publisher: Any, ids: Callable[[str], str], run: PublishedRun
) -> None:
    changes = client.watch_conversation(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    snapshot = next(changes).snapshot
    assert snapshot.complete
    assert {w.invocation.tool_name for w in snapshot.invocations} == {"get_weather", "get_time"}
    assert {w.run_status for w in snapshot.invocations} == {pb.RUN_STATUS_COMPLETED}

    later = publisher.run(
        tenant_id=run.tenant_id, conversation_id=run.conversation_id, channel=CHANNEL, run_id=ids("run")
    )
    later.tool_call(
        round_index=0, sequence_index=0, tool_call_id="call_flight", tool_name="get_flight", arguments={"no": "SK1"}
    )
    pending = next(changes).invocation_changed
    assert (pending.event_type, pending.invocation.invocation.tool_call_id) == ("ToolCallRequested", "call_flight")
    assert pending.invocation.invocation.status == pb.INVOCATION_STATUS_PENDING
    assert pending.invocation.run_status == pb.RUN_STATUS_RUNNING

    later.tool_result(round_index=0, sequence_index=0, tool_call_id="call_flight", result={"gate": "B7"})
    answered = next(changes).invocation_changed
    assert answered.event_type == "ToolResultReceived"
    assert answered.position > pending.position
    assert answered.invocation.invocation.status == pb.INVOCATION_STATUS_SUCCEEDED
    assert json.loads(answered.invocation.invocation.result) == {"gate": "B7"}

    client.erase_conversation(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    with pytest.raises(ToolHistoryError) as raised:
        next(changes)
    assert (raised.value.status, raised.value.method) == ("NOT_FOUND", "WatchConversation")
    assert "erased" in raised.value.details


def test_erasure_leaves_nothing_to_replay(client: ToolHistoryClient, run: PublishedRun, replayed: Any) -> None:
    erased = client.erase_conversation(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    assert (erased.erased_events, erased.erased_invocations) == (5, 2)
    empty = replayed(client, run.conversation_id, "openai", until=lambda h: h.turns == [])
    assert empty.messages() == []
    assert list(client.list_tool_invocations(tenant_id=run.tenant_id, conversation_id=run.conversation_id)) == []
    again = client.erase_conversation(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    assert (again.erased_events, again.erased_invocations) == (0, 0)


async def test_the_async_client_replays_the_same(
    client: ToolHistoryClient, aclient: AsyncToolHistoryClient, run: PublishedRun
) -> None:
    for format in ("openai", "anthropic", "gemini"):
        expected = client.get_replay_history(
            tenant_id=run.tenant_id, conversation_id=run.conversation_id, format=format
        )
        history = await aclient.get_replay_history(
            tenant_id=run.tenant_id, conversation_id=run.conversation_id, format=format
        )
        assert history.messages() == expected.messages()
        assert [t.run_id for t in history.turns] == [run.run_id]
    ids = [
        i.tool_call_id
        async for i in aclient.list_tool_invocations(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    ]
    assert len(ids) == 2


def test_a_wrong_token_is_unauthenticated_and_not_worth_retrying(stack: Stack, tenant: str) -> None:
    with (
        ToolHistoryClient(stack.address, token="not-a-jwt", tls=stack.tls or False) as wrong,
        pytest.raises(ToolHistoryError) as raised,
    ):
        wrong.get_replay_history(tenant_id=tenant, conversation_id="any")
    assert (raised.value.code, raised.value.status, raised.value.retriable) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        False,
    )
    assert raised.value.method == "GetReplayHistory"


def test_a_token_of_another_tenant_is_refused_this_tenants_history(stack: Stack, run: PublishedRun) -> None:
    assert stack.other_tenant_token, "the stack gives a token of another tenant (TOOLHISTORY_OTHER_TENANT_TOKEN)"
    with (
        ToolHistoryClient(stack.address, token=stack.other_tenant_token, tls=stack.tls or False) as stranger,
        pytest.raises(ToolHistoryError) as raised,
    ):
        stranger.get_replay_history(tenant_id=run.tenant_id, conversation_id=run.conversation_id)
    assert (raised.value.status, raised.value.retriable) == ("PERMISSION_DENIED", False)
