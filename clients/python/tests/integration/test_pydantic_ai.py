"""Two turns of a PydanticAI agent against the service: recorded by the adapter, replayed into the next run."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Any

import pytest
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from toolhistory.pydantic_ai import (
    REASONING_FORMATS,
    REPLAY_FORMAT,
    recorded_run,
    splice_message_history,
    to_message_history,
)

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.integration

CHANNEL = "web"


def _has_user_prompt(message: ModelMessage) -> bool:
    return isinstance(message, ModelRequest) and any(isinstance(p, UserPromptPart) for p in message.parts)


def _first_turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Three parallel calls in one response (one fails, one has an empty id, which PydanticAI keeps), then an answer."""
    if _has_user_prompt(messages[-1]):
        return ModelResponse(
            parts=[
                ToolCallPart("lookup_order", {"order_id": "A-1"}, tool_call_id="call_order"),
                ToolCallPart("charge_card", {"amount": 30}, tool_call_id="call.charge"),
                ToolCallPart("lookup_order", {"order_id": "B-2"}, tool_call_id=""),
            ],
            usage=RequestUsage(input_tokens=100, output_tokens=20),
        )
    return ModelResponse(
        parts=[TextPart("A-1 shipped; the card was declined.")], usage=RequestUsage(input_tokens=200, output_tokens=10)
    )


def _agent(model: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> Agent[None, str]:
    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        return {"order_id": order_id, "status": "shipped"}

    @agent.tool_plain
    def charge_card(amount: int) -> str:
        raise ModelRetry(f"card declined for {amount}")

    return agent


def _message_id(message: ModelMessage) -> str | None:
    value = (message.metadata or {}).get("id")
    return value if isinstance(value, str) else None


async def test_a_recorded_turn_is_replayed_into_the_next_run(
    stack: Any, publisher: Any, client: Any, ids: Any, replayed_now: Any
) -> None:
    tenant = stack.tenant
    conversation = ids("conv")

    first_run = publisher.run(
        tenant_id=tenant, conversation_id=conversation, channel=CHANNEL, run_id=ids("run"), user_message_id="u-1"
    )
    first = await recorded_run(first_run, _agent(_first_turn), "Where is A-1? Charge 30.", assistant_message_id="a-1")
    # The host keeps the conversation's text, each message with its id.
    chat: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Where is A-1? Charge 30.")], metadata={"id": "u-1"}),
        ModelResponse(parts=[TextPart(first.output)], metadata={"id": "a-1"}),
    ]

    history = await asyncio.to_thread(
        replayed_now, client, conversation, REPLAY_FORMAT, until=lambda h: len(h.turns) == 1
    )
    message_history = splice_message_history(chat, history, id_of=_message_id)
    assert ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(message_history)) == (
        message_history
    )

    seen: list[list[ModelMessage]] = []

    def second_turn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("Still shipped.")], usage=RequestUsage(input_tokens=50, output_tokens=5))

    second_run = publisher.run(
        tenant_id=tenant, conversation_id=conversation, channel=CHANNEL, run_id=ids("run"), user_message_id="u-2"
    )
    second = await recorded_run(
        second_run,
        _agent(second_turn),
        "And now?",
        assistant_message_id="a-2",
        message_history=message_history,
    )
    assert second.output == "Still shipped."

    (sent,) = seen
    # The model sees: question 1, the replayed round, answer 1, question 2.
    assert [type(m) for m in sent] == [ModelRequest, ModelResponse, ModelRequest, ModelResponse, ModelRequest]
    calls = [p for p in sent[1].parts if isinstance(p, ToolCallPart)]
    returns = {p.tool_call_id: p for p in sent[2].parts if isinstance(p, ToolReturnPart)}
    assert [c.tool_name for c in calls] == ["lookup_order", "charge_card", "lookup_order"]
    assert [c.args for c in calls] == [{"order_id": "A-1"}, {"amount": 30}, {"order_id": "B-2"}]
    assert all(c.tool_call_id != "" for c in calls), "an empty id is replayed with a derived one"
    assert calls[0].tool_call_id == "call_order"
    assert set(returns) == {c.tool_call_id for c in calls}, "every call is paired with its result by id"
    order, charge, unnamed = (returns[c.tool_call_id] for c in calls)
    assert (order.outcome, order.content) == ("success", {"order_id": "A-1", "status": "shipped"})
    assert (charge.outcome, charge.content) == ("failed", "card declined for 30")
    assert (unnamed.outcome, unnamed.content) == ("success", {"order_id": "B-2", "status": "shipped"})
    assert sent[3].parts[0] == TextPart(first.output)


def _search_then_answer(answer: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """One web search (five numbered sources; the service's policy compacts web_search by citation), then `answer`."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if _has_user_prompt(messages[-1]):
            return ModelResponse(parts=[ToolCallPart("web_search", {"q": "rain in Paris"}, tool_call_id="call_search")])
        return ModelResponse(parts=[TextPart(answer)])

    return model


def _search_agent(model: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> Agent[None, str]:
    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def web_search(q: str) -> dict[str, Any]:
        return {"query": q, "results": [{"sourceNumber": n, "title": f"{q}, source {n}"} for n in range(1, 6)]}

    return agent


async def test_the_answer_s_cited_sources_compact_the_next_replay_to_those_sources(
    stack: Any, publisher: Any, client: Any, ids: Any, replayed_now: Any
) -> None:
    conversation = ids("conv")
    run = publisher.run(
        tenant_id=stack.tenant, conversation_id=conversation, channel=CHANNEL, run_id=ids("run"), user_message_id="u-1"
    )
    answer = "Rain is likely [source2], as the radar shows [source4]."
    first = await recorded_run(
        run,
        _search_agent(_search_then_answer(answer)),
        "Will it rain in Paris?",
        assistant_message_id="a-1",
        cited_sources_from_answer=True,
    )
    assert first.output == answer

    history = await asyncio.to_thread(
        replayed_now, client, conversation, REPLAY_FORMAT, until=lambda h: len(h.turns) == 1
    )
    (call,) = [call for turn in history.turns for round_ in turn.rounds for call in round_.calls]
    assert [item["sourceNumber"] for item in json.loads(call.result)["results"]] == [2, 4]
    assert call.compacted_items == 3

    # The next run's model is sent only the two cited sources.
    chat: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Will it rain in Paris?")], metadata={"id": "u-1"}),
        ModelResponse(parts=[TextPart(answer)], metadata={"id": "a-1"}),
    ]
    returns = [
        part
        for message in splice_message_history(chat, history, id_of=_message_id)
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]
    assert [[item["sourceNumber"] for item in part.content["results"]] for part in returns] == [[2, 4]]


@pytest.mark.parametrize(
    ("provider", "redacted_id", "model_name"),
    [
        ("bedrock", "redacted_content", "anthropic.claude-opus-4-5"),
        ("anthropic", "redacted_thinking", "claude-opus-4-5"),
    ],
)
async def test_a_crashed_run_s_thinking_goes_back_as_thinking_parts_when_the_turn_goes_on(
    stack: Any, publisher: Any, client: Any, ids: Any, provider: str, redacted_id: str, model_name: str
) -> None:
    conversation = ids("conv")
    thinking = [
        ThinkingPart("Look the order up first.", signature="EqQBCkgIARABGAIiQ", provider_name=provider),
        ThinkingPart("", id=redacted_id, signature="EmwKAhgBEgy3va3pzix", provider_name=provider),
    ]
    order_call = ids("call_order")
    answered = 0

    def crashing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        # A reasoning round, a second round, then the worker loses its provider.
        nonlocal answered
        answered += 1
        if answered == 1:
            return ModelResponse(
                parts=[
                    *thinking,
                    TextPart("I'll look the order up."),
                    ToolCallPart("lookup_order", {"order_id": "A-1"}, tool_call_id=order_call),
                ],
                provider_name=provider,
            )
        if answered == 2:
            return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "B-2"}, tool_call_id=ids("call_b"))])
        raise ConnectionError("the worker lost the provider")

    def run_of() -> Any:
        # A channel whose policy replays a crashed run's rounds that reached a later model call (per_service_call).
        return publisher.run(
            tenant_id=stack.tenant,
            conversation_id=conversation,
            channel="long-runs",
            run_id=ids("run"),
            user_message_id="user-1",
        )

    agent = Agent(FunctionModel(crashing, model_name=model_name))
    agent.tool_plain(lookup_order)
    with pytest.raises(ConnectionError):
        await recorded_run(run_of(), agent, "Where is A-1?", assistant_message_id=None)

    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format=REASONING_FORMATS[provider], model=model_name
    )
    seen: list[list[ModelMessage]] = []

    def answering(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("A-1 has shipped.")])

    next_agent = Agent(FunctionModel(answering, model_name=model_name))
    next_agent.tool_plain(lookup_order)
    await next_agent.run("Where is A-1?", message_history=to_message_history(history))
    [sent] = [m for m in seen[0] if isinstance(m, ModelResponse)]
    # The next request carries the thinking in place: first in the round, signatures intact, then the text.
    assert sent.parts[:3] == [*thinking, TextPart("I'll look the order up.")]
    assert [p.tool_call_id for p in sent.parts if isinstance(p, ToolCallPart)] == [order_call]

    # Another model gets the round's text and calls, no thinking.
    other = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format=REASONING_FORMATS[provider], model="another-model"
    )
    [response, *_] = to_message_history(other)
    assert isinstance(response, ModelResponse)
    assert not any(isinstance(p, ThinkingPart) for p in response.parts)


def lookup_order(order_id: str) -> dict[str, Any]:
    return {"order_id": order_id, "status": "shipped"}


GEMINI_THOUGHT_SIGNATURE = base64.b64encode(b"gemini thought signature").decode()
GEMINI_CALL_SIGNATURE = base64.b64encode(b"gemini call signature").decode()


@pytest.mark.parametrize(("provider", "model_name"), [("google", "gemini-3-pro-preview"), ("openai", "gpt-5")])
async def test_a_crashed_run_s_gemini_or_openai_reasoning_goes_back_as_its_model_keeps_it(
    stack: Any, publisher: Any, client: Any, ids: Any, provider: str, model_name: str
) -> None:
    conversation = ids("conv")
    order_call = ids("call_order")
    # The parts PydanticAI's GoogleModel / OpenAIResponsesModel make of a reasoning round.
    if provider == "google":
        thinking = [
            ThinkingPart(
                "Look the order up first.",
                provider_name="google",
                provider_details={"thought_signature": GEMINI_THOUGHT_SIGNATURE},
            )
        ]
        call = ToolCallPart(
            "lookup_order",
            {"order_id": "A-1"},
            tool_call_id=order_call,
            provider_name="google",
            provider_details={"thought_signature": GEMINI_CALL_SIGNATURE},
        )
    else:
        thinking = [
            ThinkingPart("Look the order up first.", id="rs_68a1f0c2", signature="gAAAAABoofDC", provider_name="openai")
        ]
        call = ToolCallPart(
            "lookup_order", {"order_id": "A-1"}, tool_call_id=order_call, id="fc_68a1f0c2", provider_name="openai"
        )
    answered = 0

    def crashing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal answered
        answered += 1
        if answered == 1:
            return ModelResponse(parts=[*thinking, TextPart("I'll look the order up."), call], provider_name=provider)
        if answered == 2:
            return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "B-2"}, tool_call_id=ids("call_b"))])
        raise ConnectionError("the worker lost the provider")

    agent = Agent(FunctionModel(crashing, model_name=model_name))
    agent.tool_plain(lookup_order)
    run = publisher.run(
        tenant_id=stack.tenant,
        conversation_id=conversation,
        channel="long-runs",
        run_id=ids("run"),
        user_message_id="user-1",
    )
    with pytest.raises(ConnectionError):
        await recorded_run(run, agent, "Where is A-1?", assistant_message_id=None)

    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format=REASONING_FORMATS[provider], model=model_name
    )
    seen: list[list[ModelMessage]] = []

    def answering(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("A-1 has shipped.")])

    next_agent = Agent(FunctionModel(answering, model_name=model_name))
    next_agent.tool_plain(lookup_order)
    await next_agent.run("Where is A-1?", message_history=to_message_history(history))
    [sent, *_] = [m for m in seen[0] if isinstance(m, ModelResponse)]
    # The next request carries the reasoning as the provider's own model keeps it, then the text, then the call
    # with its signature (Gemini) or its fc_ id (OpenAI).
    assert sent.provider_name == provider
    assert sent.parts[:2] == [*thinking, TextPart("I'll look the order up.")]
    [sent_call, *_] = [p for p in sent.parts if isinstance(p, ToolCallPart)]
    assert (sent_call.tool_call_id, sent_call.args_as_dict()) == (order_call, {"order_id": "A-1"})
    assert (sent_call.id, sent_call.provider_name, sent_call.provider_details) == (
        call.id,
        call.provider_name,
        call.provider_details,
    )

    # Another model gets the round's text and calls, no reasoning.
    other = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format=REASONING_FORMATS[provider], model="another-model"
    )
    [response, *_] = to_message_history(other)
    assert isinstance(response, ModelResponse)
    assert not any(isinstance(p, ThinkingPart) for p in response.parts)
    assert all(p.id is None for p in response.parts if isinstance(p, ToolCallPart))
