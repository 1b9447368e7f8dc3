"""A LangGraph agent recorded through the adapter against the running service, replayed into its next turn."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from dataclasses import field
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from toolhistory.events import RunScope
from toolhistory.langchain import (
    ToolHistoryCallbackHandler,
    search_history_tool,
    splice_tool_history,
    to_langchain_messages,
)
from toolhistory.v1 import toolhistory_pb2 as pb

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from langgraph.graph.state import CompiledStateGraph

    from toolhistory.client import ToolHistoryClient
    from toolhistory.publisher import ToolEventPublisher
    from toolhistory.replay import ReplayHistory

    from conftest import Replayed, Stack

pytestmark = pytest.mark.integration

# A call recorded with an empty id is replayed with an id derived from its place in the conversation.
DERIVED_ID = re.compile(r"^call_[0-9a-f]{26}$")


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, answering with its scripted messages in order and keeping what it was given.

    bind_tools keeps the model itself: the fake model has no tool binding of its own.
    """

    received: list[list[BaseMessage]] = field(default_factory=list)  # type: ignore[assignment]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        if len(self.received) > len(self.responses):
            raise AssertionError(f"ScriptedChatModel: no reply scripted for call {len(self.received) - 1}")
        return super()._generate(messages, *args, **kwargs)


def scripted(*replies: AIMessage) -> ScriptedChatModel:
    return ScriptedChatModel(responses=list(replies), received=[])


def tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args, "type": "tool_call"}


@tool
def get_order(order_id: str) -> str:
    """Looks an order up."""
    return f"order {order_id}: shipped"


@tool
def charge_card(amount: int) -> str:
    """Charges the card."""
    raise ValueError("card declined")


@tool
def refund(order_id: str, amount: int) -> str:
    """Refunds an order, once a person approves."""
    answer = interrupt({"reason": f"Refund {amount} EUR for {order_id}?"})
    approved = isinstance(answer, dict) and answer.get("approved") is True
    return f"refunded {amount} EUR for {order_id}" if approved else "refund declined"


@tool
def find_product(name: str) -> str:
    """Finds a product in the catalogue."""
    return f"{name}: Electric Kettle 1.7 l, in stock"


def agent(
    model: ScriptedChatModel, tools: Sequence[BaseTool], checkpointer: InMemorySaver | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A model node and a ToolNode (a tool's error becomes an error ToolMessage), looping until no tool is asked for."""
    bound = model.bind_tools(tools)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(call_model, afunc=acall_model))
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=checkpointer)


def completed(assistant_message_id: str) -> Callable[[ReplayHistory], bool]:
    return lambda history: any(turn.assistant_message_id == assistant_message_id for turn in history.turns)


def test_two_turns_recorded_by_the_handler_and_replayed_into_the_next_run(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
    replayed_now: Replayed,
) -> None:
    conversation = ids("conv")
    scope = RunScope(tenant_id=stack.tenant, conversation_id=conversation, channel="web", run_id=ids("run"))
    # Turn 1: three parallel calls in one model response: one answers, one raises, one has no id (the model gave none).
    model = scripted(
        AIMessage(
            content="",
            tool_calls=[
                tool_call("call_order", "get_order", {"order_id": "A-1"}),
                tool_call("call_charge", "charge_card", {"amount": 12}),
                tool_call("", "get_order", {"order_id": "B-2"}),
            ],
            usage_metadata={"input_tokens": 40, "output_tokens": 12, "total_tokens": 52},
        ),
        AIMessage(content="A-1 and B-2 shipped; the card was declined.", id="answer-1"),
    )
    question = HumanMessage("Where are A-1 and B-2? And charge 12.", id="user-1")
    handler = ToolHistoryCallbackHandler(publisher=publisher, scope=scope)

    first = agent(model, [get_order, charge_card]).invoke({"messages": [question]}, {"callbacks": [handler]})

    answer = first["messages"][-1]
    assert answer.id == "answer-1"
    assert [event.type for event in handler.settled()] == [
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolResultReceived",
        "ToolResultReceived",
        "RunCompleted",
    ]

    history = replayed_now(client, conversation, "openai", until=completed("answer-1"))

    (turn,) = history.turns
    assert turn.after_message_id == "user-1"
    replay = to_langchain_messages(history)
    assert [type(message).__name__ for message in replay] == ["AIMessage", "ToolMessage", "ToolMessage", "ToolMessage"]

    # Turn 2: the host's conversation with the replayed calls spliced before the answer, then the new question.
    host = [question, AIMessage(content=answer.content, id=answer.id)]
    follow_up = HumanMessage("Was anything charged?", id="user-2")
    spliced = splice_tool_history(host, history)
    assert [message.id for message in spliced if isinstance(message, (HumanMessage, AIMessage)) and message.id] == [
        "user-1",
        "answer-1",
    ]
    next_model = scripted(AIMessage(content="No: the card was declined.", id="answer-2"))
    second = ToolHistoryCallbackHandler(publisher=publisher, scope=dataclasses.replace(scope, run_id=ids("run")))

    agent(next_model, [get_order, charge_card]).invoke({"messages": [*spliced, follow_up]}, {"callbacks": [second]})

    # The model of turn 2 sees the earlier calls, each paired with its result, the error marked.
    (seen,) = next_model.received
    assert seen[0] == question
    calls_message = seen[1]
    assert isinstance(calls_message, AIMessage)
    calls = calls_message.tool_calls
    assert [(call["name"], call["args"]) for call in calls] == [
        ("get_order", {"order_id": "A-1"}),
        ("charge_card", {"amount": 12}),
        ("get_order", {"order_id": "B-2"}),
    ]
    assert [call["id"] for call in calls[:2]] == ["call_order", "call_charge"]
    assert DERIVED_ID.match(calls[2]["id"] or "")
    results = seen[2:5]
    assert all(isinstance(result, ToolMessage) for result in results)
    assert [(r.tool_call_id, r.content, r.status) for r in results if isinstance(r, ToolMessage)] == [
        ("call_order", "order A-1: shipped", "success"),
        ("call_charge", "ValueError: card declined", "error"),
        (calls[2]["id"], "order B-2: shipped", "success"),
    ]
    assert seen[5:] == [host[1], follow_up]
    assert [event.type for event in second.settled()] == ["RunCompleted"]


async def test_an_interrupt_is_an_approval_request_and_the_resume_records_the_decision_and_result(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
    replayed: Replayed,
) -> None:
    conversation = ids("conv")
    scope = RunScope(tenant_id=stack.tenant, conversation_id=conversation, channel="web", run_id=ids("run"))
    model = scripted(
        AIMessage(content="", tool_calls=[tool_call("call_refund", "refund", {"order_id": "A-1", "amount": 5})]),
        AIMessage(content="Refunded.", id="answer-refund"),
    )
    graph = agent(model, [refund], checkpointer=InMemorySaver())
    handler = ToolHistoryCallbackHandler(publisher=publisher, scope=scope)
    config: Any = {"configurable": {"thread_id": conversation}, "callbacks": [handler]}

    paused = await graph.ainvoke({"messages": [HumanMessage("Refund A-1", id="user-refund")]}, config)

    assert "__interrupt__" in paused
    waiting = replayed(client, conversation, "openai", until=lambda h: len(h.pending_approvals) == 1)
    (pending,) = waiting.pending_approvals
    assert (pending.tool_call_id, pending.round_index, pending.sequence_index) == ("call_refund", 0, 0)
    assert pending.reason == "Refund 5 EUR for A-1?"

    await graph.ainvoke(Command(resume={"approved": True, "decided_by": "grace"}), config)

    assert [event.type for event in handler.settled()] == [
        "ToolCallRequested",
        "ToolApprovalRequested",
        "ToolApprovalDecided",
        "ToolResultReceived",
        "RunCompleted",
    ]
    history = replayed(client, conversation, "openai", until=completed("answer-refund"))
    assert history.pending_approvals == []
    replay = to_langchain_messages(history)
    assert [(type(m).__name__, getattr(m, "tool_call_id", None), m.content) for m in replay] == [
        ("AIMessage", None, ""),
        ("ToolMessage", "call_refund", "refunded 5 EUR for A-1"),
    ]


INTERRUPTED_NOTICE = (
    "[interrupted] This call was interrupted before its result was recorded: it may or may not have taken effect. "
    "Check before calling it again."
)


async def test_a_run_cancelled_in_a_side_effect_tool_replays_the_call_as_interrupted_not_failed(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
    replayed_now: Replayed,
) -> None:
    """transfer_funds has side effects in the service's policy: its call, cut off by the host cancelling the run, is
    replayed with the notice that it may have taken effect, not as a tool that failed."""
    conversation = ids("conv")
    scope = RunScope(tenant_id=stack.tenant, conversation_id=conversation, channel="web", run_id=ids("run"))
    transferring = asyncio.Event()

    @tool
    async def transfer_funds(amount: int) -> str:
        """Transfers funds (and waits on the bank)."""
        transferring.set()
        await asyncio.Event().wait()
        return "sent"

    model = scripted(AIMessage(content="", tool_calls=[tool_call("call_transfer", "transfer_funds", {"amount": 5})]))
    handler = ToolHistoryCallbackHandler(publisher=publisher, scope=scope)
    turn = asyncio.create_task(
        agent(model, [transfer_funds]).ainvoke(
            {"messages": [HumanMessage("Send 5 EUR", id="user-transfer")]}, {"callbacks": [handler]}
        )
    )
    await transferring.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert [event.type for event in handler.settled()] == ["ToolCallRequested", "RunFailed"]
    history = replayed_now(client, conversation, "openai", until=lambda h: len(h.turns) == 1)
    assert [
        (type(m).__name__, getattr(m, "tool_call_id", None), m.content) for m in to_langchain_messages(history)
    ] == [
        ("AIMessage", None, ""),
        ("ToolMessage", "call_transfer", INTERRUPTED_NOTICE),
    ]


def test_the_agent_finds_a_text_inside_a_word_of_an_earlier_call_with_search_history(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
    replayed_now: Replayed,
) -> None:
    conversation = ids("conv")
    scope = RunScope(tenant_id=stack.tenant, conversation_id=conversation, channel="web", run_id=ids("run"))
    # Turn 1, recorded through the handler: the product lookup whose result says "Kettle".
    first = scripted(
        AIMessage(content="", tool_calls=[tool_call("call_product", "find_product", {"name": "P-7"})]),
        AIMessage(content="P-7 is in stock.", id="answer-product"),
    )
    handler = ToolHistoryCallbackHandler(publisher=publisher, scope=scope)
    agent(first, [find_product]).invoke(
        {"messages": [HumanMessage("Is P-7 in stock?", id="user-p")]}, {"callbacks": [handler]}
    )
    handler.settled()
    replayed_now(client, conversation, "openai", until=completed("answer-product"))
    # Search documents are written after recording: the search, given this process's token for the
    # conversation, waits until its index has the run's calls and results.
    found = client.search_tool_history(
        tenant_id=stack.tenant, conversation_id=conversation, query="KETT", match="substring"
    )
    (hit,) = found.hits
    assert list(hit.matched_in) == [pb.SEARCH_HIT_FIELD_RESULT]
    assert "**Kett**le" in hit.snippet

    # Turn 2: the model searches its own history by substring and is answered the hit.
    second = scripted(
        AIMessage(content="", tool_calls=[tool_call("call_search", "search_history", {"query": "kett"})]),
        AIMessage(content="You asked about the kettle P-7.", id="answer-search"),
    )
    search = search_history_tool(client, tenant_id=stack.tenant, conversation_id=conversation)

    state = agent(second, [search]).invoke({"messages": [HumanMessage("What did I look up?", id="user-s")]})

    (answer,) = [message for message in state["messages"] if isinstance(message, ToolMessage)]
    assert answer.status == "success"
    (answered,) = json.loads(str(answer.content))["hits"]
    assert {key: answered[key] for key in ("tool", "matchedIn", "runId", "toolCallId")} == {
        "tool": "find_product",
        "matchedIn": ["result"],
        "runId": scope.run_id,
        "toolCallId": "call_product",
    }
    assert "**Kett**le" in answered["snippet"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", answered["at"])
    # The model read the answer in its next call.
    assert second.received[-1][-1] == answer


class CrashingChatModel(ScriptedChatModel):
    """Answers with its scripted messages, then fails as a worker that lost its provider."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if len(self.received) == len(self.responses):
            self.received.append(list(messages))
            raise ConnectionError("the worker lost the provider")
        return super()._generate(messages, *args, **kwargs)


THINKING = [
    {"type": "thinking", "thinking": "Look the order up first.", "signature": "EqQBCkgIARABGAIiQ"},
    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
]
CLAUDE = {"model_provider": "anthropic", "model_name": "claude-opus-4-5"}


def test_a_crashed_run_s_thinking_goes_back_first_in_its_round_when_the_turn_goes_on(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("conv")

    def scope() -> RunScope:
        # A channel whose policy replays a crashed run's rounds that reached a later model call (per_service_call).
        return RunScope(tenant_id=stack.tenant, conversation_id=conversation, channel="long-runs", run_id=ids("run"))

    order_call = ids("call_order")
    first_model = CrashingChatModel(
        responses=[
            AIMessage(
                content=[
                    *THINKING,
                    {"type": "text", "text": "I'll look the order up."},
                    {"type": "tool_use", "id": order_call, "name": "get_order", "input": {"order_id": "A-1"}},
                ],
                tool_calls=[tool_call(order_call, "get_order", {"order_id": "A-1"})],
                response_metadata=CLAUDE,
            ),
            AIMessage(
                content="",
                tool_calls=[tool_call(ids("call_b"), "get_order", {"order_id": "B-2"})],
                response_metadata=CLAUDE,
            ),
        ],
        received=[],
    )
    question = HumanMessage("Where is A-1?", id="user-1")
    handler = ToolHistoryCallbackHandler(publisher=publisher, scope=scope())
    with pytest.raises(ConnectionError):
        agent(first_model, [get_order]).invoke({"messages": [question]}, {"callbacks": [handler]})
    assert [event.type for event in handler.settled()][:2] == ["ModelResponseReceived", "ToolCallRequested"]

    # The turn goes on: the Anthropic replay (or the OpenAI one asked for Anthropic's) carries the thinking.
    for format, provider in (("anthropic", None), ("openai", "anthropic")):
        history = client.get_replay_history(
            tenant_id=stack.tenant,
            conversation_id=conversation,
            format=format,  # type: ignore[arg-type]
            model="claude-opus-4-5",
            provider=provider,
        )
        [round_] = history.turns[0].rounds
        assert (round_.reasoning_omitted, json.loads(round_.reasoning_json)) == (
            pb.REASONING_OMISSION_UNSPECIFIED,
            THINKING,
        ), format
        replayed = to_langchain_messages(history)
        next_model = scripted(AIMessage(content="A-1 has shipped.", response_metadata=CLAUDE))
        agent(next_model, [get_order]).invoke({"messages": [question, *replayed]})
        sent = next_model.received[0][1]
        assert isinstance(sent, AIMessage)
        # What the next request carries: the thinking first, byte for byte, then the text, then the call.
        assert json.dumps(sent.content) == json.dumps([*THINKING, {"type": "text", "text": "I'll look the order up."}])
        assert [c["id"] for c in sent.tool_calls] == [order_call]

    # Another model gets none of it: the round's text alone.
    other = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="anthropic", model="claude-sonnet-4-5"
    )
    assert other.turns[0].rounds[0].reasoning_omitted == pb.REASONING_OMISSION_OTHER_MODEL
    [message, *_] = to_langchain_messages(other)
    assert message.content == "I'll look the order up."
