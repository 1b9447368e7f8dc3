"""Two turns of a Microsoft Agent Framework agent against the service: ``ToolHistoryProvider`` over the framework's own
``InMemoryHistoryProvider`` records the function calls and gives them back in their places, so the second turn's
model sees what it sees with the plain in-memory provider."""

from __future__ import annotations

import asyncio
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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolhistory.agent_framework import ToolHistoryProvider
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence

    from toolhistory.publisher import ToolEventPublisher

    from conftest import Stack

pytestmark = pytest.mark.integration

CHANNEL = "web"
LONG_RUNS = "long-runs"
"""A channel whose policy replays a failed run's finished rounds (``per_service_call`` visibility; see
test/client/python-package.e2e-spec.ts)."""
QUESTIONS = ("Where are A-1 and B-2? And charge me 30.", "Try the charge again?")


class ScriptedChatClient(FunctionInvocationLayer[Any], ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """A model that answers from a script keyed by the last message, and keeps what each request sent it."""

    def __init__(self, answer: Callable[[Sequence[Message]], Message]) -> None:
        super().__init__()
        self.answer = answer
        self.seen: list[list[Any]] = []

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Awaitable[ChatResponse]:
        self.seen.append(seen_by_model(messages))
        return self._respond(messages)

    async def _respond(self, messages: Sequence[Message]) -> ChatResponse:
        return ChatResponse(messages=[self.answer(messages)])


def seen_by_model(messages: Sequence[Message]) -> list[Any]:
    """What a model API is sent of each message: its role and its contents' text, calls and results (the ids the
    framework gives calls without one, new each run, as one placeholder)."""

    def content(c: Content) -> Any:
        if c.type == "text":
            return ("text", c.text)
        if c.type == "function_call":
            return ("call", _stable(c.call_id), c.name, c.parse_arguments())
        if c.type == "function_result":
            return ("result", _stable(c.call_id), c.result)
        return (c.type,)

    return [(m.role, [content(c) for c in m.contents]) for m in messages]


def _stable(call_id: str | None) -> str | None:
    return "af-call-id" if call_id and call_id.startswith("af-call-") else call_id


def two_turns(messages: Sequence[Message]) -> Message:
    last = messages[-1]
    if last.role == "user" and last.text == QUESTIONS[0]:
        # Parallel calls, one without an id (the framework gives it one), one of which fails.
        return Message(
            "assistant",
            [
                Content.from_function_call("call-a1", "lookup_order", arguments={"order_id": "A-1"}),
                Content.from_function_call("", "lookup_order", arguments={"order_id": "B-2"}),
                Content.from_function_call("call-charge", "charge_card", arguments={"amount": 30}),
            ],
        )
    if last.role == "tool":
        return Message("assistant", [Content.from_text("A-1 and B-2 shipped; the card was declined.")])
    return Message("assistant", [Content.from_text("It was declined before; I will not retry.")])


@tool
def lookup_order(order_id: str) -> str:
    """Looks an order up."""
    return f"{order_id}: shipped"


@tool
def charge_card(amount: int) -> str:
    """Charges the card."""
    raise RuntimeError(f"card declined for {amount}")


async def _converse(provider: HistoryProvider, questions: Sequence[str] = QUESTIONS, **agent: Any) -> list[list[Any]]:
    """The turns through ``provider``: what the model was sent, request by request."""
    model = ScriptedChatClient(two_turns)
    assistant = Agent(client=model, tools=[lookup_order, charge_card], context_providers=[provider], **agent)
    session = assistant.create_session()
    for question in questions:
        await assistant.run(question, session=session)
    return model.seen


def _provider(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    conversation: str,
    *,
    channel: str = CHANNEL,
    per_service_call: bool = False,
    inner: HistoryProvider | None = None,
) -> ToolHistoryProvider:
    return ToolHistoryProvider(
        inner or InMemoryHistoryProvider(),
        publisher=publisher,
        client=aclient,
        tenant_id=stack.tenant,
        channel=channel,
        conversation_id=conversation,
        per_service_call=per_service_call,
    )


@pytest.mark.parametrize("per_service_call", [False, True])
async def test_the_second_turn_sees_the_first_turns_calls_as_with_the_plain_in_memory_provider(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    per_service_call: bool,
) -> None:
    flag = {"require_per_service_call_history_persistence": per_service_call}
    provider = _provider(stack, publisher, aclient, ids("maf-conv"), per_service_call=per_service_call)

    with_toolhistory = await _converse(provider, **flag)
    plain = await _converse(InMemoryHistoryProvider(), **flag)

    assert with_toolhistory == plain
    second_turn = with_toolhistory[-1]
    calls = [c[2] for _, contents in second_turn for c in contents if c[0] == "call"]
    assert calls == ["lookup_order", "lookup_order", "charge_card"]  # parallel, one failing
    results = [c[2] for _, contents in second_turn for c in contents if c[0] == "result"]
    assert results == ["A-1: shipped", "B-2: shipped", "Error: Function failed."]


def refund(amount: int) -> str:
    """Refunds an amount."""
    return f"refunded {amount}"


def _crashing(messages: Sequence[Message]) -> Message:
    """Turn 1: a lookup, then a refund, then the model service fails; turn 2: an answer."""
    last = messages[-1]
    if last.role == "user" and last.text == "Refund A-1.":
        return Message(
            "assistant", [Content.from_function_call("call-a1", "lookup_order", arguments={"order_id": "A-1"})]
        )
    if last.role == "tool" and last.contents[0].call_id == "call-a1":
        return Message("assistant", [Content.from_function_call("call-refund", "refund", arguments={"amount": 5})])
    if last.role == "tool":
        raise RuntimeError("model service unavailable")
    return Message("assistant", [Content.from_text("Where were we?")])


@pytest.mark.parametrize(
    ("per_service_call", "channel"),
    [(True, LONG_RUNS), (False, CHANNEL)],
    ids=["per service call keeps the finished rounds", "per run drops the crashed run"],
)
@pytest.mark.parametrize("same_process", [True, False], ids=["same process", "resumed by another process"])
async def test_a_run_that_crashed_after_a_round_is_resumed_with_its_rounds_replayed_or_dropped(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    per_service_call: bool,
    channel: str,
    same_process: bool,
) -> None:
    """In the same process the next question ends the crashed run as failed; in another (a new agent and provider,
    the session restored from its dict) nobody ends it and it stays running: the replay is the same."""
    conversation = ids("maf-crash")
    model = ScriptedChatClient(_crashing)

    def agent() -> Agent[Any]:
        return Agent(
            client=model,
            tools=[lookup_order, tool(refund)],
            context_providers=[
                _provider(stack, publisher, aclient, conversation, channel=channel, per_service_call=per_service_call)
            ],
            require_per_service_call_history_persistence=per_service_call,
        )

    assistant = agent()
    session = assistant.create_session()

    with pytest.raises(Exception, match="model service unavailable"):
        await assistant.run("Refund A-1.", session=session)
    if not same_process:
        assistant, session = agent(), AgentSession.from_dict(session.to_dict())
    await assistant.run("Still there?", session=session)

    after_crash = model.seen[-1]
    calls = [c[2] for _, contents in after_crash for c in contents if c[0] == "call"]
    results = [c[2] for _, contents in after_crash for c in contents if c[0] == "result"]
    if per_service_call:
        # The finished round, right after the question that started the run; the refund, whose result was never
        # persisted, is left out.
        assert after_crash == [
            ("user", [("text", "Refund A-1.")]),
            ("assistant", [("call", "call-a1", "lookup_order", {"order_id": "A-1"})]),
            ("tool", [("result", "call-a1", "A-1: shipped")]),
            ("user", [("text", "Still there?")]),
        ]
    else:
        # Per run, nothing of the crashed run was kept: as with the plain provider, not even its question.
        assert calls == []
        assert results == []
        assert after_crash == [("user", [("text", "Still there?")])]


calls_of_a_round = st.lists(
    st.tuples(
        st.sampled_from(["lookup_order", "charge_card"]),
        st.integers(1, 99),
        st.booleans(),  # with an id of the model's, else the framework's own
    ),
    min_size=1,
    max_size=3,
)


def _scripted_rounds(rounds: list[list[tuple[str, int, bool]]]) -> Callable[[Sequence[Message]], Message]:
    """Turn 1: a response per round (its calls), then the answer; turn 2: an answer."""

    def answer(messages: Sequence[Message]) -> Message:
        asked = [m for m in messages if m.role == "user"]
        done = sum(1 for m in messages[messages.index(asked[-1]) :] if m.role == "tool")
        if len(asked) == 1 and done < len(rounds):
            return Message(
                "assistant",
                [
                    Content.from_function_call(
                        f"call-{done}-{i}" if with_id else "",
                        name,
                        arguments={"order_id": f"O-{n}"} if name == "lookup_order" else {"amount": n},
                    )
                    for i, (name, n, with_id) in enumerate(rounds[done])
                ],
            )
        return Message("assistant", [Content.from_text(f"Turn {len(asked)} answered.")])

    return answer


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(calls_of_a_round, min_size=1, max_size=3), per_service_call=st.booleans())
def test_over_generated_runs_the_model_sees_what_the_plain_in_memory_provider_gives_it(
    stack: Stack, publisher: ToolEventPublisher, ids: Callable[[str], str], rounds: list[Any], per_service_call: bool
) -> None:
    async def seen_through(provider: HistoryProvider) -> list[list[Any]]:
        model = ScriptedChatClient(_scripted_rounds(rounds))
        assistant = Agent(
            client=model,
            tools=[lookup_order, charge_card],
            context_providers=[provider],
            require_per_service_call_history_persistence=per_service_call,
        )
        session = assistant.create_session()
        for question in QUESTIONS:
            await assistant.run(question, session=session)
        return model.seen

    async def both() -> tuple[list[Any], list[Any]]:
        async with AsyncToolHistoryClient(stack.address, token=stack.token, tls=stack.tls or False) as history:
            provider = _provider(stack, publisher, history, ids("maf-prop"), per_service_call=per_service_call)
            decorated = await seen_through(provider)
        return decorated, await seen_through(InMemoryHistoryProvider())

    decorated, plain = asyncio.run(both())
    assert decorated == plain


def _approving(messages: Sequence[Message]) -> Message:
    """Turn 1 asks for a refund, which needs the person's approval, then answers; turn 2 answers at once."""
    last = messages[-1]
    if last.role == "user" and last.text == "Refund 5.":
        return Message("assistant", [Content.from_function_call("call-refund", "refund", arguments={"amount": 5})])
    if last.role == "tool":
        return Message("assistant", [Content.from_text(f"Done: {last.contents[0].result}")])
    return Message("assistant", [Content.from_text("Anything else?")])


async def _paused_and_answered(
    provider: HistoryProvider,
    approved: bool,
    per_service_call: bool,
    *,
    resumed_by: Callable[[], HistoryProvider] | None = None,
) -> list[list[Any]]:
    """Turn 1 pauses for the approval and is resumed with the person's answer through the framework's own path (the
    approval request's response as the next run's input; with ``resumed_by``, by a new agent with a new provider and
    the session as saved, as another process would); turn 2 asks again."""
    model = ScriptedChatClient(_approving)

    def agent_with(history: HistoryProvider) -> Agent[Any]:
        return Agent(
            client=model,
            tools=[tool(refund, approval_mode="always_require")],
            context_providers=[history],
            require_per_service_call_history_persistence=per_service_call,
        )

    assistant = agent_with(provider)
    session = assistant.create_session()
    paused = await assistant.run("Refund 5.", session=session)
    (request,) = paused.user_input_requests
    if resumed_by is not None:
        assistant, session = agent_with(resumed_by()), AgentSession.from_dict(session.to_dict())
    await assistant.run(Message("user", [request.to_function_approval_response(approved)]), session=session)
    await assistant.run("Thanks.", session=session)
    return model.seen


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
@pytest.mark.parametrize("one_provider_object", [True, False], ids=["same provider", "another process"])
async def test_an_approval_pauses_and_resumes_through_the_framework_and_is_recorded_as_an_approval(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    approved: bool,
    one_provider_object: bool,
) -> None:
    conversation = ids("maf-approval")

    def opened() -> ToolHistoryProvider:
        return _provider(stack, publisher, aclient, conversation)

    decorated = await _paused_and_answered(
        opened(), approved, per_service_call=False, resumed_by=None if one_provider_object else opened
    )
    plain = await _paused_and_answered(
        InMemoryHistoryProvider(),
        approved,
        per_service_call=False,
        resumed_by=None if one_provider_object else InMemoryHistoryProvider,
    )

    assert decorated == plain
    (invocation,) = [
        i async for i in aclient.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation)
    ]
    assert invocation.tool_call_id == "call-refund"
    assert invocation.approval == (
        toolhistory_pb2.APPROVAL_STATUS_APPROVED if approved else toolhistory_pb2.APPROVAL_STATUS_DENIED
    )
