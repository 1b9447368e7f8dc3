"""The Microsoft Agent Framework history provider with the framework's own Agent and InMemoryHistoryProvider: what it
records, and that as a store it behaves as the provider it decorates. Replay comes from a real gRPC server with canned
answers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    Content,
    FunctionInvocationLayer,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
    tool,
)
from recording_publisher import RecordingPublisher

from toolhistory.agent_framework import ToolHistoryProvider
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.v1 import toolhistory_pb2

from toolhistory_peer import CannedToolHistory, serving

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence


@pytest.fixture
def canned() -> CannedToolHistory:
    return CannedToolHistory()


@pytest.fixture
async def client(canned: CannedToolHistory) -> AsyncIterator[AsyncToolHistoryClient]:
    with serving(canned) as address:
        async with AsyncToolHistoryClient(address) as history:
            yield history


def _provider(
    client: AsyncToolHistoryClient,
    publisher: RecordingPublisher | None = None,
    *,
    inner: HistoryProvider | None = None,
    per_service_call: bool = False,
) -> ToolHistoryProvider:
    return ToolHistoryProvider(
        inner or InMemoryHistoryProvider(),
        publisher=publisher or RecordingPublisher(),
        client=client,
        tenant_id="acme",
        channel="web",
        per_service_call=per_service_call,
    )


class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """Answers from a script, one response per model call, and keeps what each call was sent."""

    def __init__(self, script: Sequence[Message] | Callable[[Sequence[Message]], Message]) -> None:
        super().__init__()
        self.script = script if callable(script) else list(script)
        self.seen: list[list[Any]] = []

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Awaitable[ChatResponse]:
        self.seen.append(seen_by_model(messages))
        return self._respond(messages)

    async def _respond(self, messages: Sequence[Message]) -> ChatResponse:
        answer = self.script(messages) if callable(self.script) else self.script.pop(0)
        return ChatResponse(messages=[answer])


def seen_by_model(messages: Sequence[Message]) -> list[Any]:
    """What a model API is sent of each message: its role and its contents' text, calls and results."""

    def content(c: Content) -> Any:
        if c.type == "text":
            return ("text", c.text)
        if c.type == "function_call":
            return ("call", c.call_id, c.name, c.parse_arguments())
        if c.type == "function_result":
            return ("result", c.call_id, c.result)
        return (c.type,)

    return [(m.role, [content(c) for c in m.contents]) for m in messages]


@tool
def lookup_order(order_id: str) -> str:
    """Looks an order up."""
    return f"{order_id}: shipped"


@tool
def charge_card(amount: int) -> str:
    """Charges the card."""
    raise RuntimeError(f"card declined for {amount}")


def _said(text: str) -> Message:
    return Message("assistant", [Content.from_text(text)])


# -- recording: a run of the framework's Agent ---------------------------------------------------------------------


@pytest.mark.parametrize("per_service_call", [False, True])
async def test_a_run_is_recorded_round_by_round_and_ended_by_its_answer(
    client: AsyncToolHistoryClient, per_service_call: bool
) -> None:
    publisher = RecordingPublisher()
    inner = InMemoryHistoryProvider()
    model = ScriptedChatClient(
        [
            Message(
                "assistant",
                [
                    Content.from_function_call("c1", "lookup_order", arguments={"order_id": "A-1"}),
                    Content.from_function_call("c2", "charge_card", arguments={"amount": 30}),
                ],
            ),
            _said("A-1 shipped; the card was declined."),
        ]
    )
    agent = Agent(
        client=model,
        tools=[lookup_order, charge_card],
        context_providers=[_provider(client, publisher, inner=inner, per_service_call=per_service_call)],
        require_per_service_call_history_persistence=per_service_call,
    )
    session = agent.create_session()

    await agent.run("Where is A-1? And charge me 30.", session=session)

    events = publisher.events()
    assert [(e["type"], e.get("toolCallId")) for e in events] == [
        ("ToolCallRequested", "c1"),
        ("ToolCallRequested", "c2"),
        ("ToolResultReceived", "c1"),
        ("ToolResultReceived", "c2"),
        ("RunCompleted", None),
    ]
    results = {e["toolCallId"]: (e["result"], e["isError"]) for e in events if e["type"] == "ToolResultReceived"}
    assert results == {"c1": ("A-1: shipped", False), "c2": ("Error: Function failed.", True)}
    # The calls are toolhistory's; inner keeps the question and the answer, whose ids place the run.
    kept = await inner.get_messages(session.session_id, state=session.state[inner.source_id])
    assert [(m.role, m.text) for m in kept] == [
        ("user", "Where is A-1? And charge me 30."),
        ("assistant", "A-1 shipped; the card was declined."),
    ]
    assert {e["userMessageId"] for e in events} == {kept[0].message_id}
    assert events[-1]["assistantMessageId"] == kept[1].message_id
    assert {e["conversationId"] for e in events} == {session.session_id}


async def test_per_run_the_results_after_the_last_model_response_are_left_out(client: AsyncToolHistoryClient) -> None:
    publisher = RecordingPublisher()
    provider = _provider(client, publisher)
    call = Content.from_function_call("c1", "lookup_order", arguments={"order_id": "A-1"})

    await provider.save_messages(
        "conv-1",
        [
            Message("user", [Content.from_text("Where is A-1?")]),
            Message("assistant", [call]),
            Message("tool", [Content.from_function_result("c1", result="A-1: shipped")]),
        ],
        state={},
    )

    assert [e["type"] for e in publisher.events()] == ["ToolCallRequested", "RunCompleted"]


@pytest.mark.parametrize(("provider_flag", "agent_flag"), [(True, False), (False, True)])
async def test_the_provider_refuses_an_agent_whose_persistence_differs(
    client: AsyncToolHistoryClient, provider_flag: bool, agent_flag: bool
) -> None:
    agent = Agent(
        client=ScriptedChatClient([_said("hello")]),
        context_providers=[_provider(client, per_service_call=provider_flag)],
        require_per_service_call_history_persistence=agent_flag,
    )

    with pytest.raises(ValueError, match=f"per_service_call={provider_flag}.*persistence={agent_flag}"):
        await agent.run("hi", session=agent.create_session())


# -- as a store: the provider it decorates, message for message ---------------------------------------------------


def _echo(messages: Sequence[Message]) -> Message:
    """An answer naming the question it answers (the in-memory provider takes identical id-less messages sent again
    for a replayed transcript)."""
    return _said(f"answer to {messages[-1].text}")


async def _three_turns(provider: HistoryProvider) -> list[list[Any]]:
    model = ScriptedChatClient(_echo)
    agent = Agent(client=model, context_providers=[provider])
    session = agent.create_session()
    for question in ("one", "two", "three"):
        await agent.run(question, session=session)
    return model.seen


async def _restored_session(provider: HistoryProvider) -> list[list[Any]]:
    model = ScriptedChatClient(_echo)
    agent = Agent(client=model, context_providers=[provider])
    session = agent.create_session()
    await agent.run("one", session=session)
    restored = AgentSession.from_dict(session.to_dict())
    await agent.run("two", session=restored)
    return model.seen


async def _without_session(provider: HistoryProvider) -> list[Any]:
    await provider.save_messages(None, [Message("user", [Content.from_text("hi")]), _said("hello")], state=None)
    return seen_by_model(await provider.get_messages(None, state=None))


async def _stored_messages(provider: HistoryProvider) -> list[Any]:
    state: dict[str, Any] = {}
    await provider.save_messages("s1", [Message("user", [Content.from_text("hi")]), _said("hello")], state=state)
    await provider.save_messages("s1", [Message("user", [Content.from_text("again")])], state=state)
    return seen_by_model(await provider.get_messages("s1", state=state))


STORE_BEHAVIOURS: dict[str, Callable[[HistoryProvider], Awaitable[Any]]] = {
    "turns in order, each seeing the ones before": _three_turns,
    "a session serialized and restored keeps its history": _restored_session,
    "without a session id, messages pass through": _without_session,
    "save then get, oldest first": _stored_messages,
}

INNER_PROVIDERS: dict[str, Callable[[], HistoryProvider]] = {
    "default": InMemoryHistoryProvider,
    "inputs not stored": lambda: InMemoryHistoryProvider(store_inputs=False),
}


@pytest.mark.parametrize("inner", INNER_PROVIDERS)
@pytest.mark.parametrize("behaviour", STORE_BEHAVIOURS)
async def test_as_a_store_it_behaves_as_the_provider_it_decorates(
    behaviour: str, inner: str, client: AsyncToolHistoryClient
) -> None:
    plain = await STORE_BEHAVIOURS[behaviour](INNER_PROVIDERS[inner]())
    decorated = await STORE_BEHAVIOURS[behaviour](_provider(client, inner=INNER_PROVIDERS[inner]()))

    assert decorated == plain


# -- reading: the replayed turns in their places -------------------------------------------------------------------


async def test_get_messages_puts_each_replayed_turn_before_its_answer_as_the_frameworks_messages(
    canned: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    provider = _provider(client)
    state: dict[str, Any] = {}
    question, answer = Message("user", [Content.from_text("Where is A-1?")]), _said("Shipped; card declined.")
    question.message_id, answer.message_id = "m-question", "m-answer"
    await provider.inner.save_messages("conv-1", [question, answer], state=state)
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup_order", "arguments": '{"order_id":"A-1"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "charge_card", "arguments": '{"amount":30}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "A-1: shipped"},
        {"role": "tool", "tool_call_id": "c2", "content": "[error] Error: Function failed."},
    ]
    failed = toolhistory_pb2.ToolCall(
        tool_call_id="c2", tool_name="charge_card", result="Error: Function failed.", is_error=True
    )
    canned.replay = toolhistory_pb2.GetReplayHistoryResponse(
        turns=[
            toolhistory_pb2.Turn(
                run_id="run-1",
                assistant_message_id="m-answer",
                after_message_id="m-question",
                status=toolhistory_pb2.RUN_STATUS_COMPLETED,
                messages_json=json.dumps(messages),
                rounds=[toolhistory_pb2.Round(round_index=0, calls=[failed])],
            )
        ]
    )

    got = await provider.get_messages("conv-1", state=state)

    assert seen_by_model(got) == [
        ("user", [("text", "Where is A-1?")]),
        (
            "assistant",
            [("call", "c1", "lookup_order", {"order_id": "A-1"}), ("call", "c2", "charge_card", {"amount": 30})],
        ),
        # A round's results in one tool message, as the framework gives them; the failure as the framework said it.
        ("tool", [("result", "c1", "A-1: shipped"), ("result", "c2", "Error: Function failed.")]),
        ("assistant", [("text", "Shipped; card declined.")]),
    ]
    (request,) = canned.received("GetReplayHistory")
    assert request.request.conversation_id == "conv-1"
    assert list(request.request.branch_message_ids) == ["m-question", "m-answer"]
    assert request.request.format == toolhistory_pb2.HISTORY_FORMAT_OPENAI_CHAT


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
async def test_an_approval_request_and_its_response_are_recorded_as_the_calls_approval(
    client: AsyncToolHistoryClient, approved: bool
) -> None:
    publisher = RecordingPublisher()

    @tool(approval_mode="always_require")
    def refund(amount: int) -> str:
        """Refunds an amount."""
        return f"refunded {amount}"

    model = ScriptedChatClient(
        [Message("assistant", [Content.from_function_call("c1", "refund", arguments={"amount": 5})]), _said("Done.")]
    )
    agent = Agent(client=model, tools=[refund], context_providers=[_provider(client, publisher)])
    session = agent.create_session()

    paused = await agent.run("Refund 5.", session=session)
    (request,) = paused.user_input_requests
    await agent.run(Message("user", [request.to_function_approval_response(approved)]), session=session)

    events = publisher.events()
    assert [e["type"] for e in events] == [
        "ToolCallRequested",
        "ToolApprovalRequested",
        "ToolApprovalDecided",
        "ToolResultReceived",
        "RunCompleted",
    ]
    assert events[2]["approved"] is approved
    assert len({e["runId"] for e in events}) == 1  # the response resumed the run that asked
