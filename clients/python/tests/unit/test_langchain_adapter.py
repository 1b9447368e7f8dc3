"""The LangGraph / LangChain adapter: the handler inside real LangGraph graphs with a fake chat model, and replay."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

from toolhistory.consistency import kafka_consistency_token, last_consistency_token
from toolhistory.errors import PublishError
from toolhistory.events import PublishedEvent, RunScope, TokenUsage
from toolhistory.langchain import (
    ApprovalDecision,
    PublishFailure,
    ToolHistoryCallbackHandler,
    ToolHistoryPublishError,
    approval_decision_of,
    bounded_usage,
    call_position_in,
    failure_of,
    to_json_object,
    to_langchain_messages,
    token_usage_of,
    tool_outcome_of,
)
from toolhistory.publisher import PendingEvent, RunPublisher, prepare_events
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from langgraph.graph.state import CompiledStateGraph

SCOPE = RunScope(tenant_id="t1", conversation_id="c1", channel="web", run_id="run-1")
MODEL_NAME = "scripted-model"


# ---- test parts: a fake chat model that can call tools, tools, graphs, a recording run ---------------------------


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's fake chat model, answering with its scripted messages in order and keeping what it was given.

    bind_tools keeps the model itself (the fake model has no tool binding of its own); a scripted Exception is raised.
    """

    received: list[list[BaseMessage]] = field(default_factory=list)  # type: ignore[assignment]
    failures: dict[int, Exception] = field(default_factory=dict)  # type: ignore[assignment]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        call = len(self.received) - 1
        if call in self.failures:
            raise self.failures[call]
        if call >= len(self.responses):
            raise AssertionError(f"ScriptedChatModel: no reply scripted for call {call}")
        return super()._generate(messages, *args, **kwargs)


def scripted(
    *replies: AIMessage, failures: dict[int, Exception] | None = None, output_version: str | None = None
) -> ScriptedChatModel:
    """``output_version="v1"``: LangChain's base chat model turns each reply into its standard content blocks, as
    it does for every integration set so."""
    tagged = [
        reply.model_copy(update={"response_metadata": {"model_name": MODEL_NAME, **reply.response_metadata}})
        for reply in replies
    ]
    return ScriptedChatModel(responses=tagged, received=[], failures=failures or {}, output_version=output_version)


def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args, "type": "tool_call"}


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}


@tool
def get_order(order_id: str) -> str:
    """Looks an order up."""
    return f"order {order_id}: shipped"


@tool
def get_customer(customer_id: int) -> dict[str, Any]:
    """Looks a customer up."""
    return {"id": customer_id, "name": "Ada"}


@tool
def charge_card(amount: int) -> str:
    """Charges the card."""
    raise ValueError("card declined")


TOOLS: list[BaseTool] = [get_order, get_customer, charge_card]


def agent(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool] = TOOLS,
    *,
    checkpointer: InMemorySaver | None = None,
    end_after_tools: bool = False,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A model node and a ToolNode (tool errors become error ToolMessages), looping until the model asks for none."""
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
    graph.add_edge("tools", END if end_after_tools else "agent")
    return graph.compile(checkpointer=checkpointer)


# The envelope every event of the run carries; the tests compare what each event says of its own.
ENVELOPE = {"eventId", "schemaVersion", "tenantId", "conversationId", "channel", "runId", "occurredAt", "userMessageId"}


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class RecordingRun(RunPublisher):
    """The package's RunPublisher over a send function that prepares each event as the publisher does (the
    contract's checks included) and keeps it instead of producing it: the broker is the integration test's business.

    ``events`` holds each event's own fields, snake_case at the top level. ``refuse`` picks events the "broker"
    refuses; ``result_tools`` the tool each result was published for (what picks the per-tool result limit).
    """

    def __init__(self, scope: RunScope = SCOPE, refuse: Callable[[dict[str, Any]], bool] = lambda event: False) -> None:
        super().__init__(scope, self._send)
        self.events: list[dict[str, Any]] = []
        self.result_tools: list[str | None] = []
        self._refuse = refuse
        self._changed = threading.Condition()

    def _send(self, pending: Sequence[PendingEvent]) -> list[PublishedEvent]:
        prepared = prepare_events(self.scope, pending)
        fields = [
            {snake_case(key): value for key, value in json.loads(event.value).items() if key not in ENVELOPE}
            for event in prepared
        ]
        refused = next((event for event in fields if self._refuse(event)), None)
        if refused is not None:
            raise PublishError(f"broker refused {refused['type']}", retriable=False)
        with self._changed:
            published = []
            for event, waiting in zip(fields, pending, strict=True):
                self.events.append(event)
                if waiting.type == "ToolResultReceived":
                    self.result_tools.append(waiting.tool_name)
                offset = len(self.events) - 1
                token = kafka_consistency_token("agent.tool-events", 0, offset)
                published.append(PublishedEvent(f"e{len(self.events)}", waiting.type, 0, offset, token))
            self._changed.notify_all()
            return published

    def types(self) -> list[str]:
        return [event["type"] for event in self.events]

    def wait_for(self, event: dict[str, Any], timeout: float = 10.0) -> None:
        """Blocks until ``event`` is recorded: a tool can wait for another call's event of its round."""
        with self._changed:
            if not self._changed.wait_for(lambda: event in self.events, timeout):
                raise AssertionError(f"not recorded within {timeout} s: {event}")


@dataclass
class RecordingPublisher:
    """A ToolEventPublisher stand-in: opens RecordingRuns and keeps the scopes it was asked for."""

    opened: list[dict[str, Any]] = field(default_factory=list)
    last: RecordingRun | None = None

    def run(self, **scope: Any) -> RecordingRun:
        self.opened.append(scope)
        self.last = RecordingRun(scope=RunScope(**scope))
        return self.last


def handler_for(run: RecordingRun, **options: Any) -> ToolHistoryCallbackHandler:
    return ToolHistoryCallbackHandler(run, **options)


def result(
    round_index: int, sequence_index: int, tool_call_id: str, value: Any, is_error: bool = False
) -> dict[str, Any]:
    return {
        "type": "ToolResultReceived",
        "round_index": round_index,
        "sequence_index": sequence_index,
        "tool_call_id": tool_call_id,
        "result": value,
        "is_error": is_error,
    }


def two_round_script() -> ScriptedChatModel:
    """Two parallel calls, then one, then the answer."""
    return scripted(
        AIMessage(
            content="",
            tool_calls=[
                call("call_a", "get_order", {"order_id": "A-1"}),
                call("call_b", "get_customer", {"customer_id": 7}),
            ],
            usage_metadata=usage(10, 5),
        ),
        AIMessage(
            content="", tool_calls=[call("call_c", "get_order", {"order_id": "B-2"})], usage_metadata=usage(20, 6)
        ),
        AIMessage(content="Both orders have shipped, Ada.", usage_metadata=usage(30, 7)),
    )


def assert_two_round_events(events: list[dict[str, Any]], final: BaseMessage) -> None:
    assert events[:2] == [
        {
            "type": "ToolCallRequested",
            "round_index": 0,
            "sequence_index": 0,
            "tool_call_id": "call_a",
            "tool_name": "get_order",
            "arguments": {"order_id": "A-1"},
        },
        {
            "type": "ToolCallRequested",
            "round_index": 0,
            "sequence_index": 1,
            "tool_call_id": "call_b",
            "tool_name": "get_customer",
            "arguments": {"customer_id": 7},
        },
    ]
    # The parallel calls' results in either order.
    parallel = sorted(events[2:4], key=lambda event: event["sequence_index"])
    assert parallel == [
        {**result(0, 0, "call_a", "order A-1: shipped")},
        {**result(0, 1, "call_b", '{"id": 7, "name": "Ada"}')},
    ]
    assert events[4:] == [
        {
            "type": "ToolCallRequested",
            "round_index": 1,
            "sequence_index": 0,
            "tool_call_id": "call_c",
            "tool_name": "get_order",
            "arguments": {"order_id": "B-2"},
        },
        result(1, 0, "call_c", "order B-2: shipped"),
        {
            "type": "RunCompleted",
            "assistant_message_id": final.id,
            "finish_reason": "stop",
            "usage": [
                {"inputTokens": 10, "outputTokens": 5, "model": MODEL_NAME},
                {"inputTokens": 20, "outputTokens": 6, "model": MODEL_NAME},
                {"inputTokens": 30, "outputTokens": 7, "model": MODEL_NAME},
            ],
        },
    ]


# ---- recording ------------------------------------------------------------------------------------------------------


def test_records_rounds_results_and_completion_all_published_when_invoke_returns() -> None:
    run = RecordingRun()
    handler = handler_for(run)

    state = agent(two_round_script()).invoke(
        {"messages": [HumanMessage("Where are orders A-1 and B-2?")]}, {"callbacks": [handler]}
    )

    final = state["messages"][-1]
    assert final.content == "Both orders have shipped, Ada."
    assert isinstance(final.id, str)
    assert_two_round_events(run.events, final)
    assert len(handler.settled()) == 7


def test_what_the_handler_published_carries_its_tokens_and_the_conversations_reads_wait_for_the_last() -> None:
    run = RecordingRun()
    handler = handler_for(run)
    agent(two_round_script()).invoke(
        {"messages": [HumanMessage("Where are orders A-1 and B-2?")]}, {"callbacks": [handler]}
    )
    settled = handler.settled()
    assert [event.consistency_token for event in settled] == [
        f"ct1:k:agent.tool-events:0:{offset}" for offset in range(7)
    ]
    assert handler.run.consistency_token == "ct1:k:agent.tool-events:0:6"
    assert last_consistency_token(SCOPE.tenant_id, SCOPE.conversation_id) == "ct1:k:agent.tool-events:0:6"


async def test_records_an_async_graph_the_same_way() -> None:
    loop_thread = threading.get_ident()
    publishing_threads: set[int] = set()

    def refuse_none_but_note_the_thread(event: dict[str, Any]) -> bool:
        publishing_threads.add(threading.get_ident())
        return False

    run = RecordingRun(refuse=refuse_none_but_note_the_thread)
    handler = handler_for(run)

    state = await agent(two_round_script()).ainvoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler]})

    assert_two_round_events(run.events, state["messages"][-1])
    # Publishing blocks until the broker acknowledges: never on the event loop's thread.
    assert loop_thread not in publishing_threads


def test_opens_the_run_from_a_publisher_with_the_last_human_message_id_or_the_one_given() -> None:
    for options, expected in (({}, "user-msg-2"), ({"user_message_id": "host-7"}, "host-7")):
        publisher = RecordingPublisher()
        handler = ToolHistoryCallbackHandler(
            publisher=publisher, scope=SCOPE, assistant_message_id="host-msg-9", **options
        )  # type: ignore[arg-type]
        messages = [HumanMessage("a", id="user-msg-1"), AIMessage("b"), HumanMessage("c", id="user-msg-2")]

        agent(scripted(AIMessage(content="Hello."))).invoke({"messages": messages}, {"callbacks": [handler]})

        assert publisher.opened == [
            {
                "tenant_id": "t1",
                "conversation_id": "c1",
                "channel": "web",
                "run_id": "run-1",
                "user_message_id": expected,
            }
        ]
        assert publisher.last is not None
        # No tool calls and no usage reported: completed, no usage.
        assert publisher.last.events == [
            {"type": "RunCompleted", "assistant_message_id": "host-msg-9", "finish_reason": "stop"}
        ]


def test_refuses_a_user_message_id_a_fixed_run_scope_does_not_have() -> None:
    with pytest.raises(TypeError, match="a RunPublisher's scope is fixed"):
        handler_for(RecordingRun(), user_message_id="m1")
    with pytest.raises(TypeError, match="either run, or publisher and scope"):
        ToolHistoryCallbackHandler(RecordingRun(), publisher=RecordingPublisher(), scope=SCOPE)  # type: ignore[arg-type]


def test_records_a_tool_that_raises_as_an_error_result_and_the_run_goes_on() -> None:
    run = RecordingRun()
    model = scripted(
        AIMessage(content="", tool_calls=[call("call_pay", "charge_card", {"amount": 12})]),
        AIMessage(content="The card was declined."),
    )

    agent(model).invoke({"messages": [HumanMessage("pay")]}, {"callbacks": [handler_for(run)]})

    assert run.types() == ["ToolCallRequested", "ToolResultReceived", "RunCompleted"]
    assert run.events[1] == result(0, 0, "call_pay", "ValueError: card declined", is_error=True)
    told = model.received[1][-1]
    assert isinstance(told, ToolMessage)
    assert told.status == "error"


def test_answers_calls_no_tool_ran_with_the_error_tool_message_the_model_got() -> None:
    run = RecordingRun()
    model = scripted(
        AIMessage(
            content="", tool_calls=[call("call_x", "no_such_tool", {}), call("call_y", "get_order", {"order_id": 42})]
        ),
        AIMessage(content="Sorry."),
    )

    agent(model).invoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]})

    results = sorted((e for e in run.events if e["type"] == "ToolResultReceived"), key=lambda e: e["sequence_index"])
    assert [(e["tool_call_id"], e["sequence_index"], e["is_error"]) for e in results] == [
        ("call_x", 0, True),
        ("call_y", 1, True),
    ]
    assert "not a valid tool" in results[0]["result"]
    assert "validation error" in results[1]["result"]
    assert run.events[-1]["finish_reason"] == "stop"


def test_matches_tool_runs_to_calls_the_model_gave_no_id_by_name_and_arguments() -> None:
    run = RecordingRun()
    model = scripted(
        AIMessage(
            content="",
            tool_calls=[call("", "get_order", {"order_id": "A-1"}), call("", "get_order", {"order_id": "B-2"})],
        ),
        AIMessage(content="Both shipped."),
    )

    agent(model).invoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]})

    results = sorted(
        (e["sequence_index"], e["tool_call_id"], e["result"]) for e in run.events if e["type"] == "ToolResultReceived"
    )
    assert results == [(0, "", "order A-1: shipped"), (1, "", "order B-2: shipped")]


def test_publishes_run_failed_when_the_agent_run_fails_after_what_was_recorded() -> None:
    run = RecordingRun()
    overloaded = RuntimeError("model overloaded")
    overloaded.lc_error_code = "MODEL_RATE_LIMIT"  # type: ignore[attr-defined]
    model = scripted(
        AIMessage(
            content="", tool_calls=[call("call_a", "get_order", {"order_id": "A-1"})], usage_metadata=usage(3, 1)
        ),
        failures={1: overloaded},
    )

    with pytest.raises(RuntimeError, match="model overloaded"):
        agent(model).invoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]})

    assert run.types() == ["ToolCallRequested", "ToolResultReceived", "RunFailed"]
    assert run.events[2] == {
        "type": "RunFailed",
        "error": {"code": "MODEL_RATE_LIMIT", "message": "model overloaded"},
        "usage": [{"inputTokens": 3, "outputTokens": 1, "model": MODEL_NAME}],
    }


async def test_a_run_the_host_cancels_in_a_tool_fails_aborted_and_leaves_the_call_without_a_result() -> None:
    run = RecordingRun()
    charging = asyncio.Event()

    @tool("charge_card")
    async def charge_card_slowly(amount: int) -> str:
        """Charges the card (and waits on the payment provider)."""
        charging.set()
        await asyncio.Event().wait()
        return "charged"

    model = scripted(
        AIMessage(
            content="", tool_calls=[call("call_l", "get_order", {"order_id": "A-1"})], usage_metadata=usage(3, 1)
        ),
        AIMessage(content="", tool_calls=[call("call_c", "charge_card", {"amount": 5})], usage_metadata=usage(4, 2)),
    )
    graph = agent(model, [get_order, charge_card_slowly])
    turn = asyncio.create_task(graph.ainvoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]}))
    await charging.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    # The charge may or may not have gone out: no result is made up for it (replay leaves the call out, or shows a
    # side-effect tool's call as interrupted).
    assert run.types() == ["ToolCallRequested", "ToolResultReceived", "ToolCallRequested", "RunFailed"]
    assert run.events[3] == {
        "type": "RunFailed",
        "error": {"code": "aborted", "message": "the run was cancelled before it completed"},
        "usage": [
            {"inputTokens": 3, "outputTokens": 1, "model": MODEL_NAME},
            {"inputTokens": 4, "outputTokens": 2, "model": MODEL_NAME},
        ],
    }


@pytest.mark.parametrize(
    ("options", "expected"), [({}, "tool_limit"), ({"finish_reason_after_tools": "terminated"}, "terminated")]
)
def test_completes_with_the_after_tools_finish_reason_when_the_loop_ends_after_tools(
    options: dict[str, Any], expected: str
) -> None:
    run = RecordingRun()
    model = scripted(AIMessage(content="", tool_calls=[call("call_l", "get_order", {"order_id": "A"})]))

    agent(model, end_after_tools=True).invoke(
        {"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run, **options)]}
    )

    assert run.types() == ["ToolCallRequested", "ToolResultReceived", "RunCompleted"]
    assert run.events[2]["finish_reason"] == expected


def look_up_then_answer(answer: str | list[str | dict[str, Any]]) -> ScriptedChatModel:
    return scripted(
        AIMessage(content="", tool_calls=[call("call_a", "get_order", {"order_id": "A-1"})]),
        AIMessage(content=answer),
    )


@pytest.mark.parametrize(
    ("options", "answer", "expected"),
    [
        ({"cited_sources_from_answer": True}, "Shipped [source4], says the carrier [source2].", [2, 4]),
        ({"cited_sources_from_answer": True}, "Shipped.", []),
        ({"cited_sources_from_answer": False}, "Shipped [source4].", None),
        ({}, "Shipped [source4].", None),
    ],
    ids=["on: the numbers the answer cites", "on: no citation is []", "off: left out", "by default: left out"],
)
def test_reads_the_cited_sources_of_the_answer_when_asked(
    options: dict[str, Any], answer: str, expected: list[int] | None
) -> None:
    run = RecordingRun()
    agent(look_up_then_answer(answer)).invoke(
        {"messages": [HumanMessage("A-1?")]}, {"callbacks": [handler_for(run, **options)]}
    )

    completed = run.events[-1]
    assert (completed["type"], completed["finish_reason"]) == ("RunCompleted", "stop")
    assert completed.get("cited_sources") == expected
    assert expected is not None or "cited_sources" not in completed


def test_reads_the_text_blocks_of_an_answer() -> None:
    run = RecordingRun()
    blocks: list[str | dict[str, Any]] = [
        {"type": "text", "text": "Shipped [source3]"},
        {"type": "text", "text": ", on time [source1]."},
    ]
    agent(look_up_then_answer(blocks)).invoke(
        {"messages": [HumanMessage("A-1?")]}, {"callbacks": [handler_for(run, cited_sources_from_answer=True)]}
    )
    assert run.events[-1]["cited_sources"] == [1, 3]


def test_a_run_without_an_answer_or_a_failed_one_carries_no_cited_sources() -> None:
    # Ended right after tools: a later run's answer may cite this run's results.
    after_tools = RecordingRun()
    asking = scripted(AIMessage(content="[source1]", tool_calls=[call("call_l", "get_order", {"order_id": "A"})]))
    agent(asking, end_after_tools=True).invoke(
        {"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(after_tools, cited_sources_from_answer=True)]}
    )
    assert after_tools.events[-1]["finish_reason"] == "tool_limit"
    assert "cited_sources" not in after_tools.events[-1]

    interrupted = RecordingRun()
    agent(refund_script(alone=True), [get_order, refund], checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage("refund A-1")]},
        {
            "configurable": {"thread_id": "thread-cited"},
            "callbacks": [handler_for(interrupted, interrupt_ends_run=True, cited_sources_from_answer=True)],
        },
    )
    assert interrupted.events[-1]["finish_reason"] == "tool_limit"
    assert "cited_sources" not in interrupted.events[-1]

    failed = RecordingRun()
    with pytest.raises(RuntimeError, match="model overloaded"):
        agent(scripted(failures={0: RuntimeError("model overloaded")})).invoke(
            {"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(failed, cited_sources_from_answer=True)]}
        )
    assert failed.types() == ["RunFailed"]
    assert "cited_sources" not in failed.events[0]


def test_does_not_count_the_model_and_tool_calls_a_tool_makes_itself() -> None:
    inner = scripted(AIMessage(content="", tool_calls=[call("inner_1", "get_order", {"order_id": "Z"})]))

    @tool
    def research() -> str:
        """Asks another model."""
        reply = inner.invoke([HumanMessage("inner")])
        assert isinstance(reply, AIMessage)
        return str(len(reply.tool_calls))

    run = RecordingRun()
    model = scripted(AIMessage(content="", tool_calls=[call("call_r", "research", {})]), AIMessage(content="Found it."))

    agent(model, [research]).invoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]})

    assert len(inner.received) == 1
    assert run.events[:2] == [
        {
            "type": "ToolCallRequested",
            "round_index": 0,
            "sequence_index": 0,
            "tool_call_id": "call_r",
            "tool_name": "research",
            "arguments": {},
        },
        result(0, 0, "call_r", "1"),
    ]
    assert run.types()[2:] == ["RunCompleted"]


def test_reports_a_failed_publication_and_still_publishes_the_rest_in_order() -> None:
    run = RecordingRun(refuse=lambda e: e["type"] == "ToolResultReceived" and e["tool_call_id"] == "call_b")
    heard: list[PublishFailure] = []
    handler = handler_for(run, on_publish_error=heard.append)

    agent(two_round_script()).invoke({"messages": [HumanMessage("?")]}, {"callbacks": [handler]})

    with pytest.raises(ToolHistoryPublishError) as raised:
        handler.settled()
    assert [f.event for f in raised.value.failures] == ["ToolResultReceived round 0 call 1 (get_customer call_b)"]
    assert len(raised.value.published) == 6
    assert heard == list(raised.value.failures)
    assert run.types() == [
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolCallRequested",
        "ToolResultReceived",
        "RunCompleted",
    ]


def test_fails_the_agent_run_on_a_failed_publication_with_raise_error() -> None:
    run = RecordingRun(refuse=lambda e: e["type"] == "ToolCallRequested")

    with pytest.raises(PublishError, match="broker refused ToolCallRequested"):
        agent(two_round_script()).invoke(
            {"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run, raise_error=True)]}
        )


def test_records_one_agent_run_and_reports_a_second_one() -> None:
    run = RecordingRun()
    handler = handler_for(run)
    graph = agent(
        scripted(
            AIMessage(content="one"),
            AIMessage(content="", tool_calls=[call("c", "get_order", {"order_id": "A"})]),
            AIMessage(content="two"),
        )
    )

    graph.invoke({"messages": [HumanMessage("1")]}, {"callbacks": [handler]})
    graph.invoke({"messages": [HumanMessage("2")]}, {"callbacks": [handler]})

    assert run.types() == ["RunCompleted"]
    with pytest.raises(ToolHistoryPublishError, match="create a handler per agent run"):
        handler.settled()


def test_records_a_hand_written_loop_wrapped_in_a_runnable() -> None:
    run = RecordingRun()
    model = scripted(
        AIMessage(content="", tool_calls=[call("call_c", "get_order", {"order_id": "B-2"})]),
        AIMessage(content="Shipped."),
    )

    def loop(question: str) -> BaseMessage:
        messages: list[BaseMessage] = [HumanMessage(question)]
        while True:
            reply = model.invoke(messages)
            messages.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                return reply
            messages.extend(get_order.invoke(tool_call) for tool_call in reply.tool_calls)

    answer = RunnableLambda(loop).invoke("Where is B-2?", {"callbacks": [handler_for(run)]})

    assert run.events == [
        {
            "type": "ToolCallRequested",
            "round_index": 0,
            "sequence_index": 0,
            "tool_call_id": "call_c",
            "tool_name": "get_order",
            "arguments": {"order_id": "B-2"},
        },
        result(0, 0, "call_c", "order B-2: shipped"),
        {"type": "RunCompleted", "assistant_message_id": answer.id, "finish_reason": "stop"},
    ]


# ---- approvals: interrupt() inside a tool, Command(resume=...) -------------------------------------------------------


def refund_once_approved(order_id: str, amount: int) -> str:
    answer = interrupt({"reason": f"Refund {amount} EUR for {order_id}?", "amount": amount})
    approved = (
        answer == "yes" if isinstance(answer, str) else isinstance(answer, dict) and answer.get("approved") is True
    )
    return f"refunded {amount} EUR for {order_id}" if approved else "refund declined"


@tool
def refund(order_id: str, amount: int) -> str:
    """Refunds an order, once a person approves."""
    return refund_once_approved(order_id, amount)


def refund_script(*, alone: bool = False) -> ScriptedChatModel:
    """Round 0 looks the order up; round 1 asks to refund it (the call that waits); then the answer."""
    refund_call = call("call_refund", "refund", {"order_id": "A-1", "amount": 5})
    second_round = [refund_call] if alone else [call("call_other", "get_order", {"order_id": "B-2"}), refund_call]
    return scripted(
        AIMessage(content="", tool_calls=[call("call_look", "get_order", {"order_id": "A-1"})]),
        AIMessage(content="", tool_calls=second_round),
        AIMessage(content="Done."),
    )


REQUEST = {
    "type": "ToolApprovalRequested",
    "round_index": 1,
    "sequence_index": 1,
    "tool_call_id": "call_refund",
    "reason": "Refund 5 EUR for A-1?",
}
LOOKUP_RESULT = result(1, 0, "call_other", "order B-2: shipped")
APPROVED_AND_REFUNDED = [
    {
        "type": "ToolApprovalDecided",
        "round_index": 1,
        "sequence_index": 1,
        "tool_call_id": "call_refund",
        "approved": True,
    },
    result(1, 1, "call_refund", "refunded 5 EUR for A-1"),
]


def one_call_after_the_other(run: RecordingRun, *, first: str) -> list[BaseTool]:
    """get_order and refund, one of them starting only once the other's event of round 1 is recorded.

    ToolNode runs a round's calls at once (on threads when the graph is synchronous), so the lookup's result and the
    refund's approval request are otherwise recorded in either order; each test names the order it is about.
    ``first="lookup"``: the refund interrupts once the lookup's result is recorded; ``first="refund"``: the lookup
    answers once the approval request is recorded.
    """

    @tool("get_order")
    def lookup(order_id: str) -> str:
        """Looks an order up."""
        if first == "refund" and order_id == "B-2":
            run.wait_for(REQUEST)
        return f"order {order_id}: shipped"

    @tool("refund")
    def refund_in_turn(order_id: str, amount: int) -> str:
        """Refunds an order, once a person approves."""
        if first == "lookup":
            run.wait_for(LOOKUP_RESULT)
        return refund_once_approved(order_id, amount)

    return [lookup, refund_in_turn]


@pytest.mark.parametrize(
    ("resume", "decision", "refund_result"),
    [
        pytest.param(
            {"approved": True, "reason": "goodwill", "decided_by": "grace"},
            {"approved": True, "reason": "goodwill", "decided_by": "grace"},
            "refunded 5 EUR for A-1",
            id="approved-with-reason-and-who",
        ),
        pytest.param("no", {"approved": False, "decided_by": "desk"}, "refund declined", id="denied-in-a-word"),
        pytest.param({"note": "whatever"}, None, "refund declined", id="unrecognised"),
    ],
)
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_records_the_request_then_on_resume_the_decision_and_the_result_in_one_run(
    resume: object, decision: dict[str, Any] | None, refund_result: str, use_async: bool
) -> None:
    run = RecordingRun()
    handler = handler_for(run, decided_by="desk")
    graph = agent(refund_script(), one_call_after_the_other(run, first="lookup"), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "thread-1"}, "callbacks": [handler]}

    def invoke(value: object) -> dict[str, Any]:
        if use_async:
            return asyncio.run(graph.ainvoke(value, config))
        return graph.invoke(value, config)

    paused = invoke({"messages": [HumanMessage("refund A-1")]})
    assert "__interrupt__" in paused
    paused_events = list(run.events)
    assert paused_events[-2:] == [LOOKUP_RESULT, REQUEST]
    assert "RunCompleted" not in run.types()
    assert "RunFailed" not in run.types()

    invoke(Command(resume=resume))

    after = run.events[len(paused_events) :]
    expected_decision = (
        []
        if decision is None
        else [
            {
                "type": "ToolApprovalDecided",
                "round_index": 1,
                "sequence_index": 1,
                "tool_call_id": "call_refund",
                **decision,
            }
        ]
    )
    assert after[: len(expected_decision) + 1] == [*expected_decision, result(1, 1, "call_refund", refund_result)]
    assert after[-1]["type"] == "RunCompleted"
    assert after[-1]["finish_reason"] == "stop"
    # The interrupted round's other call ran before the interrupt: its result is recorded once.
    assert [e["tool_call_id"] for e in run.events if e["type"] == "ToolResultReceived"].count("call_other") == 1
    assert len(handler.settled()) == len(run.events)


def test_a_rounds_other_call_answered_after_the_approval_request_is_recorded_once_in_the_paused_run() -> None:
    run = RecordingRun()
    handler = handler_for(run)
    graph = agent(refund_script(), one_call_after_the_other(run, first="refund"), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "thread-lookup-last"}, "callbacks": [handler]}

    graph.invoke({"messages": [HumanMessage("refund A-1")]}, config)

    paused_events = list(run.events)
    assert paused_events[-2:] == [REQUEST, LOOKUP_RESULT]

    graph.invoke(Command(resume="yes"), config)

    assert run.events[len(paused_events) :][:2] == APPROVED_AND_REFUNDED
    assert run.types()[len(paused_events) + 2 :] == ["RunCompleted"]
    assert run.events.count(LOOKUP_RESULT) == 1
    assert len(handler.settled()) == len(run.events)


def test_with_interrupt_ends_run_a_later_run_resumes_and_keeps_the_call_of_the_first() -> None:
    graph = agent(refund_script(alone=True), [get_order, refund], checkpointer=InMemorySaver())
    thread: Any = {"configurable": {"thread_id": "thread-two-runs"}}
    first = RecordingRun()

    graph.invoke(
        {"messages": [HumanMessage("refund A-1")]},
        {**thread, "callbacks": [handler_for(first, interrupt_ends_run=True)]},
    )

    assert first.types() == [
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolCallRequested",
        "ToolApprovalRequested",
        "RunCompleted",
    ]
    assert first.events[3] == {**REQUEST, "sequence_index": 0}
    # The last round's result reached no model yet.
    assert first.events[-1]["finish_reason"] == "tool_limit"

    second = RecordingRun()
    graph.invoke(Command(resume={"approved": True}), {**thread, "callbacks": [handler_for(second)]})

    # Placed by the agent's messages: round 1 of the run that began at the user's message.
    assert second.events[:2] == [
        {
            "type": "ToolApprovalDecided",
            "round_index": 1,
            "sequence_index": 0,
            "tool_call_id": "call_refund",
            "approved": True,
        },
        result(1, 0, "call_refund", "refunded 5 EUR for A-1"),
    ]
    assert second.types()[2:] == ["RunCompleted"]
    # The call is the first run's: the result still names its tool, for the publisher's per-tool result limit.
    assert second.result_tools == ["refund"]


def test_takes_a_resumed_calls_position_from_pending_approvals_and_leaves_the_rounds_other_calls() -> None:
    graph = agent(refund_script(), [get_order, refund], checkpointer=InMemorySaver())
    thread: Any = {"configurable": {"thread_id": "thread-listed"}}
    first = RecordingRun()
    graph.invoke(
        {"messages": [HumanMessage("refund A-1")]},
        {**thread, "callbacks": [handler_for(first, interrupt_ends_run=True)]},
    )
    assert any(e.get("tool_call_id") == "call_other" and e["type"] == "ToolResultReceived" for e in first.events)

    run = RecordingRun()
    pending = [toolhistory_pb2.PendingApproval(tool_call_id="call_refund", round_index=1, sequence_index=1)]
    graph.invoke(Command(resume="yes"), {**thread, "callbacks": [handler_for(run, pending_approvals=pending)]})

    assert run.events[:2] == APPROVED_AND_REFUNDED
    assert run.types()[2:] == ["RunCompleted"]


def test_without_pending_approvals_records_nothing_for_a_resumed_round_of_several_calls() -> None:
    graph = agent(refund_script(), [get_order, refund], checkpointer=InMemorySaver())
    thread: Any = {"configurable": {"thread_id": "thread-unlisted"}}
    graph.invoke(
        {"messages": [HumanMessage("refund A-1")]},
        {**thread, "callbacks": [handler_for(RecordingRun(), interrupt_ends_run=True)]},
    )

    run = RecordingRun()
    graph.invoke(Command(resume="yes"), {**thread, "callbacks": [handler_for(run)]})

    assert run.types() == ["RunCompleted"]


# ---- pure mapping ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resume", "expected"),
    [
        (True, ApprovalDecision(approved=True)),
        (False, ApprovalDecision(approved=False)),
        ("Approve", ApprovalDecision(approved=True)),
        (" yes ", ApprovalDecision(approved=True)),
        ("edit", ApprovalDecision(approved=True)),
        ("rejected", ApprovalDecision(approved=False)),
        ("n", ApprovalDecision(approved=False)),
        ("Grace", None),
        (42, None),
        (None, None),
        ({"approved": False, "message": "too much", "decidedBy": "ops"}, ApprovalDecision(False, "too much", "ops")),
        ({"approve": True}, ApprovalDecision(approved=True)),
        ({"type": "accept"}, ApprovalDecision(approved=True)),
        ({"type": "ignore"}, ApprovalDecision(approved=False)),
        ({"type": "response", "args": "hm"}, None),
        ({"action": "deny", "comment": ""}, ApprovalDecision(approved=False)),
        ({"decision": "allow", "decided_by": "x" * 257}, ApprovalDecision(approved=True)),
        ({"decisions": [{"type": "reject", "reason": "no"}]}, ApprovalDecision(False, "no")),
        ({"decisions": [{"type": "accept"}, {"type": "accept"}]}, None),
        ({"note": "whatever"}, None),
    ],
)
def test_approval_decision_of(resume: object, expected: ApprovalDecision | None) -> None:
    assert approval_decision_of(resume) == expected


def test_token_usage_of_reads_usage_metadata_then_legacy_counts_and_names_the_model() -> None:
    message = AIMessage(content="", usage_metadata=usage(4, 2), response_metadata={"model_name": "gpt-x"})
    assert token_usage_of(message, None, "called") == TokenUsage(4, 2, "gpt-x")
    assert token_usage_of(AIMessage(content="", usage_metadata=usage(4, 2)), None, "called") == TokenUsage(
        4, 2, "called"
    )
    legacy = {"token_usage": {"prompt_tokens": 9, "completion_tokens": 1}}
    assert token_usage_of(AIMessage(content=""), legacy) == TokenUsage(9, 1, None)
    assert token_usage_of(AIMessage(content=""), None) is None
    assert token_usage_of(None, {"token_usage": {"prompt_tokens": -1, "completion_tokens": 1}}) is None


def test_bounded_usage_folds_calls_beyond_the_contracts_limit_keeping_the_totals() -> None:
    entries = [TokenUsage(1, 2, "m") for _ in range(1_003)] + [TokenUsage(1, 2, "other")]
    bounded = bounded_usage(entries)
    assert len(bounded) == 1_000
    assert bounded[-1] == TokenUsage(5, 10, None)
    assert sum(u.input_tokens for u in bounded) == 1_004
    assert bounded_usage(entries[:3]) == entries[:3]


def test_tool_outcome_of_tool_messages_commands_and_plain_values() -> None:
    assert tool_outcome_of(ToolMessage(content="ok", tool_call_id="a")).is_error is False
    assert tool_outcome_of(ToolMessage(content="bad", tool_call_id="a", status="error")).is_error is True
    both = Command(
        update={"messages": [ToolMessage(content="x", tool_call_id="a"), ToolMessage(content="y", tool_call_id="b")]}
    )
    assert tool_outcome_of(both, "b").result == "y"
    assert tool_outcome_of({"id": 7}).result == {"id": 7}
    assert tool_outcome_of(None).result == ""
    assert tool_outcome_of(ToolMessage(content=[{"type": "text", "text": "t"}], tool_call_id="a")).result == [
        {"type": "text", "text": "t"}
    ]


def test_to_json_object_and_failure_of() -> None:
    assert to_json_object({"a": 1}) == {"a": 1}
    assert to_json_object([1]) == {"input": [1]}
    assert to_json_object(None) == {}
    assert to_json_object({"when": object}) == {"input": str({"when": object})}
    coded = OSError(2, "gone")
    assert failure_of(coded).code == "FileNotFoundError"  # an int errno is no error code
    assert failure_of(ValueError("x" * 5_000)).message == "x" * 4_000


def test_call_position_in_counts_rounds_since_the_last_human_message() -> None:
    messages: list[BaseMessage] = [
        HumanMessage("old"),
        AIMessage(content="", tool_calls=[call("old_1", "get_order", {})]),
        HumanMessage("new"),
        AIMessage(content="", tool_calls=[call("a", "get_order", {})]),
        ToolMessage(content="r", tool_call_id="a"),
        AIMessage(content="", tool_calls=[call("b", "get_order", {}), call("c", "refund", {})]),
    ]
    position = call_position_in(messages, "c")
    assert position is not None
    assert (position.round_index, position.sequence_index, position.tool_name, position.calls_in_round) == (
        1,
        1,
        "refund",
        2,
    )
    assert call_position_in(messages, "missing") is None


# ---- property: rounds and sequences over arbitrary parallel-call traces ---------------------------------------------


@st.composite
def traces(draw: st.DrawFn) -> list[list[tuple[str, str]]]:
    """Model outputs with tool calls: per round, (id, order) pairs; some ids empty, every non-empty id unique."""
    rounds = draw(st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=4))
    trace = []
    for round_index, size in enumerate(rounds):
        calls = []
        for sequence_index in range(size):
            empty = draw(st.booleans()) and draw(st.booleans())
            calls.append(("" if empty else f"call_{round_index}_{sequence_index}", f"O-{round_index}-{sequence_index}"))
        trace.append(calls)
    return trace


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces())
def test_each_model_output_with_calls_is_a_round_and_each_call_gets_its_one_result(
    trace: list[list[tuple[str, str]]],
) -> None:
    replies = [
        AIMessage(content="", tool_calls=[call(call_id, "get_order", {"order_id": order}) for call_id, order in calls])
        for calls in trace
    ]
    run = RecordingRun()
    agent(scripted(*replies, AIMessage(content="done"))).invoke(
        {"messages": [HumanMessage("?")]}, {"callbacks": [handler_for(run)]}
    )

    requested = [e for e in run.events if e["type"] == "ToolCallRequested"]
    expected = [
        (round_index, sequence_index, call_id, {"order_id": order})
        for round_index, calls in enumerate(trace)
        for sequence_index, (call_id, order) in enumerate(calls)
    ]
    assert [(e["round_index"], e["sequence_index"], e["tool_call_id"], e["arguments"]) for e in requested] == expected
    results = {(e["round_index"], e["sequence_index"]): e for e in run.events if e["type"] == "ToolResultReceived"}
    assert len(results) == len(expected) == len(run.events) - len(requested) - 1
    for round_index, sequence_index, call_id, arguments in expected:
        answer = results[(round_index, sequence_index)]
        assert answer["tool_call_id"] == call_id
        assert answer["result"] == f"order {arguments['order_id']}: shipped"
        # A call's result comes after its request.
        assert run.events.index(answer) > run.events.index(
            requested[expected.index((round_index, sequence_index, call_id, arguments))]
        )
    assert run.types()[-1] == "RunCompleted"


# ---- replay ------------------------------------------------------------------------------------------------------


def proto_turn(rounds: list[list[tuple[str, str, dict[str, Any], str, bool]]], **fields: Any) -> toolhistory_pb2.Turn:
    return toolhistory_pb2.Turn(
        rounds=[
            toolhistory_pb2.Round(
                round_index=index,
                calls=[
                    toolhistory_pb2.ToolCall(
                        tool_call_id=call_id,
                        tool_name=name,
                        arguments_json=json.dumps(arguments),
                        result=value,
                        is_error=is_error,
                        sequence_index=sequence,
                    )
                    for sequence, (call_id, name, arguments, value, is_error) in enumerate(calls)
                ],
            )
            for index, calls in enumerate(rounds)
        ],
        **fields,
    )


def test_to_langchain_messages_of_replayed_rounds_marks_error_results() -> None:
    response = toolhistory_pb2.GetReplayHistoryResponse(
        turns=[
            proto_turn(
                [
                    [
                        ("call_a", "get_order", {"order_id": "A-1"}, "order A-1: shipped", False),
                        ("call_b", "charge_card", {"amount": 3}, "ValueError: card declined", True),
                    ]
                ],
                run_id="r1",
            )
        ]
    )

    messages = to_langchain_messages(response)

    assert [type(m).__name__ for m in messages] == ["AIMessage", "ToolMessage", "ToolMessage"]
    assert isinstance(messages[0], AIMessage)
    assert [(c["id"], c["name"], c["args"]) for c in messages[0].tool_calls] == [
        ("call_a", "get_order", {"order_id": "A-1"}),
        ("call_b", "charge_card", {"amount": 3}),
    ]
    assert [(m.tool_call_id, m.content, m.status) for m in messages[1:] if isinstance(m, ToolMessage)] == [
        ("call_a", "order A-1: shipped", "success"),
        ("call_b", "ValueError: card declined", "error"),
    ]


def test_to_langchain_messages_of_openai_messages() -> None:
    openai = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '"A"'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
    ]
    messages = to_langchain_messages(openai)
    assert isinstance(messages[0], AIMessage)
    assert messages[0].tool_calls[0]["args"] == {"input": "A"}
    assert isinstance(messages[1], ToolMessage)
    assert (messages[1].tool_call_id, messages[1].name) == ("c1", "get_order")
    with pytest.raises(TypeError, match="unexpected message role 'user'"):
        to_langchain_messages([{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="arguments of tool call 'c1' are not JSON"):
        to_langchain_messages(
            [{**openai[0], "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{"}}]}]
        )


@settings(max_examples=50, deadline=None)
@given(
    rounds=st.lists(
        st.lists(st.tuples(st.text(min_size=1, max_size=8), st.booleans()), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_replayed_calls_are_each_paired_with_their_result_and_a_model_accepts_them(
    rounds: list[list[tuple[str, bool]]],
) -> None:
    turn = proto_turn(
        [
            [
                (f"{r}-{s}-{tag}", "get_order", {"order_id": tag}, f"result {tag}", is_error)
                for s, (tag, is_error) in enumerate(calls)
            ]
            for r, calls in enumerate(rounds)
        ]
    )
    messages = to_langchain_messages([turn])

    at = 0
    for calls in rounds:
        assistant = messages[at]
        assert isinstance(assistant, AIMessage)
        answers = messages[at + 1 : at + 1 + len(calls)]
        assert [c["id"] for c in assistant.tool_calls] == [
            a.tool_call_id for a in answers if isinstance(a, ToolMessage)
        ]
        assert [a.status for a in answers if isinstance(a, ToolMessage)] == [
            "error" if e else "success" for _, e in calls
        ]
        at += 1 + len(calls)
    assert at == len(messages)

    model = scripted(AIMessage(content="ok"))
    model.invoke([*messages, HumanMessage("next")])
    assert model.received == [[*messages, HumanMessage("next")]]
