"""search_history_tool: a LangGraph agent driven by LangChain's fake chat model calls it, and it searches over gRPC.

The service is a real gRPC server on 127.0.0.1 with canned answers (toolhistory_peer): the tests check what the
tool asked for and what the model was answered.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import ValidationError

from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.client import ToolHistoryClient
from toolhistory.consistency import remember_consistency_token
from toolhistory.errors import ToolHistoryError
from toolhistory.langchain import search_history_answer, search_history_tool
from toolhistory.v1 import toolhistory_pb2 as pb

from toolhistory_peer import CannedToolHistory, serving

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator, Sequence

    from langgraph.graph.state import CompiledStateGraph

REQUESTED_AT = datetime(2026, 11, 24, 9, 30, 15, 123_000, tzinfo=timezone.utc)


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's fake chat model answering its scripted messages in order; bind_tools keeps the model itself."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self


def agent(model: ScriptedChatModel, tools: Sequence[BaseTool]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A model node and a ToolNode, looping until the model asks for no tool."""
    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(call_model, afunc=acall_model))
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def searches(arguments: dict[str, Any]) -> ScriptedChatModel:
    """A model that calls search_history with ``arguments``, then answers."""
    return ScriptedChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[{"id": "call_s", "name": "search_history", "args": arguments, "type": "tool_call"}],
            ),
            AIMessage(content="The kettle order was run_7."),
        ]
    )


def hit(*matched_in: pb.SearchHitField.ValueType, snippet: str = "…the **kett**le…") -> pb.SearchHit:
    invocation = pb.Invocation(
        tenant_id="t1", conversation_id="c1", run_id="run_7", tool_call_id="call_a", tool_name="buy_kettle"
    )
    invocation.requested_at.FromDatetime(REQUESTED_AT)
    return pb.SearchHit(invocation=invocation, snippet=snippet, matched_in=matched_in)


def tool_answer(messages: Sequence[BaseMessage]) -> Any:
    (answer,) = [message for message in messages if isinstance(message, ToolMessage)]
    assert answer.name == "search_history"
    assert answer.tool_call_id == "call_s"
    return json.loads(str(answer.content))


@pytest.fixture
def service() -> CannedToolHistory:
    return CannedToolHistory()


@pytest.fixture
def address(service: CannedToolHistory) -> Iterator[str]:
    with serving(service) as address:
        yield address


@pytest.fixture
def client(address: str) -> Iterator[ToolHistoryClient]:
    with ToolHistoryClient(address, token="agent-token") as client:
        yield client


@pytest.fixture
async def aclient(address: str) -> AsyncIterator[AsyncToolHistoryClient]:
    async with AsyncToolHistoryClient(address, token="agent-token") as client:
        yield client


def test_the_search_waits_for_what_this_process_published_to_the_conversation(
    service: CannedToolHistory, client: ToolHistoryClient
) -> None:
    remember_consistency_token("t1", "c1", "ct1:k:agent.tool-events:0:12")
    search = search_history_tool(client, tenant_id="t1", conversation_id="c1")
    agent(searches({"query": "kett"}), [search]).invoke({"messages": [HumanMessage("Which kettle?")]})
    (received,) = service.received("SearchToolHistory")
    assert received.request.consistency_token == "ct1:k:agent.tool-events:0:12"


def test_the_model_searches_its_own_conversation_by_substring_and_reads_the_compact_hits(
    service: CannedToolHistory, client: ToolHistoryClient
) -> None:
    service.search = pb.SearchToolHistoryResponse(
        hits=[hit(pb.SEARCH_HIT_FIELD_TOOL_NAME, pb.SEARCH_HIT_FIELD_ARGUMENTS, pb.SEARCH_HIT_FIELD_RESULT)]
    )
    search = search_history_tool(client, tenant_id="t1", conversation_id="c1")

    state = agent(searches({"query": "kett"}), [search]).invoke({"messages": [HumanMessage("Which kettle?")]})

    (received,) = service.received("SearchToolHistory")
    assert (received.request.tenant_id, received.request.conversation_id, received.request.query) == (
        "t1",
        "c1",
        "kett",
    )
    assert (received.request.match, received.request.limit) == (pb.SEARCH_MATCH_SUBSTRING, 5)
    assert received.metadata["authorization"] == "Bearer agent-token"
    assert tool_answer(state["messages"]) == {
        "hits": [
            {
                "tool": "buy_kettle",
                "at": "2026-11-24T09:30:15.123Z",
                "matchedIn": ["call", "result"],
                "snippet": "…the **kett**le…",
                "runId": "run_7",
                "toolCallId": "call_a",
            }
        ]
    }
    assert state["messages"][-1].content == "The kettle order was run_7."


async def test_an_async_agent_searches_through_the_async_client_with_the_models_match_and_limit(
    service: CannedToolHistory, aclient: AsyncToolHistoryClient
) -> None:
    service.search = pb.SearchToolHistoryResponse(hits=[hit(pb.SEARCH_HIT_FIELD_RESULT, snippet="**kettle** shipped")])
    search = search_history_tool(aclient, tenant_id="t1", conversation_id="c1")

    state = await agent(searches({"query": "kettle", "match": "words", "limit": 3}), [search]).ainvoke(
        {"messages": [HumanMessage("Which kettle?")]}
    )

    (received,) = service.received("SearchToolHistory")
    assert (received.request.match, received.request.limit) == (pb.SEARCH_MATCH_WORDS, 3)
    assert tool_answer(state["messages"])["hits"][0]["matchedIn"] == ["result"]


async def test_a_sync_client_tool_also_runs_async_and_an_async_client_tool_runs_async_only(
    service: CannedToolHistory, client: ToolHistoryClient, aclient: AsyncToolHistoryClient
) -> None:
    service.search = pb.SearchToolHistoryResponse(hits=[hit(pb.SEARCH_HIT_FIELD_RESULT)])
    answer = await search_history_tool(client, tenant_id="t1", conversation_id="c1").ainvoke({"query": "kett"})
    assert json.loads(answer)["hits"][0]["tool"] == "buy_kettle"
    with pytest.raises(NotImplementedError):
        search_history_tool(aclient, tenant_id="t1", conversation_id="c1").invoke({"query": "kett"})


def test_the_default_match_applies_when_the_model_names_none(
    service: CannedToolHistory, client: ToolHistoryClient
) -> None:
    search_history_tool(client, tenant_id="t1", conversation_id="c1", default_match="words").invoke({"query": "kettle"})
    search_history_tool(client, tenant_id="t1", conversation_id="c1", default_match="words").invoke(
        {"query": "kettle", "match": "substring"}
    )
    assert [call.request.match for call in service.received("SearchToolHistory")] == [
        pb.SEARCH_MATCH_WORDS,
        pb.SEARCH_MATCH_SUBSTRING,
    ]
    with pytest.raises(ValueError, match="default_match"):
        search_history_tool(client, tenant_id="t1", conversation_id="c1", default_match="regex")  # type: ignore[arg-type]


def test_its_name_description_and_input_are_those_of_the_typescript_tool(client: ToolHistoryClient) -> None:
    search = search_history_tool(client, tenant_id="t1", conversation_id="c1")
    assert isinstance(search, StructuredTool)
    assert search.name == "search_history"
    assert 'match "substring" finds a literal text anywhere' in search.description
    schema = search.tool_call_schema.model_json_schema()  # type: ignore[union-attr]
    assert schema["required"] == ["query"]
    assert set(schema["properties"]) == {"query", "match", "limit"}
    assert (schema["properties"]["limit"]["minimum"], schema["properties"]["limit"]["maximum"]) == (1, 20)
    assert search.args_schema.model_json_schema()["additionalProperties"] is False  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "arguments",
    [{"query": ""}, {"query": "kett", "limit": 0}, {"query": "kett", "limit": 21}, {"query": "kett", "match": "regex"}],
)
def test_refuses_input_outside_its_schema_without_calling_the_service(
    service: CannedToolHistory, client: ToolHistoryClient, arguments: dict[str, Any]
) -> None:
    with pytest.raises(ValidationError):
        search_history_tool(client, tenant_id="t1", conversation_id="c1").invoke(arguments)
    assert service.received("SearchToolHistory") == []


def test_a_query_the_service_refuses_is_answered_to_the_model_and_other_failures_raise(
    service: CannedToolHistory, client: ToolHistoryClient
) -> None:
    search = search_history_tool(client, tenant_id="t1", conversation_id="c1")
    service.failures["SearchToolHistory"] = (grpc.StatusCode.INVALID_ARGUMENT, "query: at least 3 characters")
    state = agent(searches({"query": "ke"}), [search]).invoke({"messages": [HumanMessage("Which kettle?")]})
    (answer,) = [message for message in state["messages"] if isinstance(message, ToolMessage)]
    assert answer.content == "query: at least 3 characters"

    service.failures["SearchToolHistory"] = (grpc.StatusCode.PERMISSION_DENIED, "history:read needs conversation_id")
    with pytest.raises(ToolHistoryError) as refused:
        search.invoke({"query": "kett"})
    assert refused.value.status == "PERMISSION_DENIED"


FIELDS = [pb.SEARCH_HIT_FIELD_TOOL_NAME, pb.SEARCH_HIT_FIELD_ARGUMENTS, pb.SEARCH_HIT_FIELD_RESULT]


@given(
    matched=st.lists(st.sampled_from(FIELDS), unique=True).map(sorted),
    microseconds=st.integers(min_value=0, max_value=999_999),
)
def test_each_hit_says_call_then_result_once_each_and_its_time_in_milliseconds(
    matched: list[pb.SearchHitField.ValueType], microseconds: int
) -> None:
    searched = hit(*matched)
    searched.invocation.requested_at.FromDatetime(REQUESTED_AT.replace(microsecond=microseconds))
    (answered,) = json.loads(search_history_answer(pb.SearchToolHistoryResponse(hits=[searched])))["hits"]
    sides = ["call" if field != pb.SEARCH_HIT_FIELD_RESULT else "result" for field in matched]
    assert answered["matchedIn"] == sorted(set(sides), key=sides.index)
    assert answered["at"] == f"2026-11-24T09:30:15.{microseconds // 1000:03d}Z"


def test_a_hit_without_a_time_answers_null_and_one_with_only_a_completion_its_completion() -> None:
    without = pb.SearchHit(invocation=pb.Invocation(tool_name="t"))
    completed = pb.SearchHit(invocation=pb.Invocation(tool_name="t"))
    completed.invocation.completed_at.FromDatetime(REQUESTED_AT)
    hits = json.loads(search_history_answer(pb.SearchToolHistoryResponse(hits=[without, completed])))["hits"]
    assert [answered["at"] for answered in hits] == [None, "2026-11-24T09:30:15.123Z"]
