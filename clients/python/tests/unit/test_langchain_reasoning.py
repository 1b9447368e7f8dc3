"""The LangGraph / LangChain adapter and reasoning models: an AIMessage's reasoning state (each integration's own
blocks and signatures) recorded with its round, and replayed into an AIMessage that carries it again where that
integration sends it to its provider. Real LangGraph graphs with LangChain's fake chat model; the recording goes
through the package's RunPublisher and the contract's checks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from test_langchain_adapter import RecordingRun, agent, call, handler_for, scripted

from toolhistory.langchain import to_langchain_messages
from toolhistory.langchain._reasoning import GEMINI_PLACEHOLDER_SIGNATURE, reasoning_of
from toolhistory.v1 import toolhistory_pb2 as pb

GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"
OPENAI_CALL_IDS = "__openai_function_call_ids__"

ORDER_CALL = call("call_a", "get_order", {"order_id": "A-1"})
CUSTOMER_CALL = call("call_b", "get_customer", {"customer_id": 7})


def anthropic_reply() -> AIMessage:
    return AIMessage(
        content=[
            {"type": "thinking", "thinking": "Look the order up.", "signature": "EqQBCkgIARABGAIiQ"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            {"type": "text", "text": "I'll check the order."},
            {"type": "tool_use", "id": "call_a", "name": "get_order", "input": {"order_id": "A-1"}},
        ],
        tool_calls=[ORDER_CALL],
        response_metadata={"model_provider": "anthropic", "model_name": "claude-opus-4-5"},
    )


def openai_reply() -> AIMessage:
    return AIMessage(
        content=[
            {
                "type": "reasoning",
                "id": "rs_68a1",
                "summary": [{"type": "summary_text", "text": "Look it up."}],
                "encrypted_content": "gAAAAABoofDC",
            },
            {"type": "text", "text": "I'll check the order.", "id": "msg_1"},
            {
                "type": "function_call",
                "id": "fc_68a1",
                "call_id": "call_a",
                "name": "get_order",
                "arguments": '{"order_id": "A-1"}',
            },
        ],
        tool_calls=[ORDER_CALL],
        response_metadata={"model_provider": "openai", "model_name": "o4-mini", "output_version": "responses/v1"},
    )


def google_reply() -> AIMessage:
    return AIMessage(
        content=[
            {"type": "thinking", "thinking": "Both at once.", "signature": "CiQB0e2K-thought"},
            {"type": "text", "text": "I'll check both."},
        ],
        tool_calls=[ORDER_CALL, CUSTOMER_CALL],
        additional_kwargs={GEMINI_SIGNATURES: {"call_a": "CiQB0e2Kb8"}},
        response_metadata={"model_provider": "google_genai", "model_name": "gemini-3-pro"},
    )


def bedrock_reply() -> AIMessage:
    return AIMessage(
        content=[
            {"type": "reasoning_content", "reasoning_content": {"text": "Look it up.", "signature": "EqQBCkgI"}},
            {"type": "text", "text": "I'll check the order."},
        ],
        tool_calls=[ORDER_CALL],
        response_metadata={"model_provider": "bedrock_converse", "model_name": "anthropic.claude-opus-4-5"},
    )


# What each reply records: the provider and model, the provider's own items, the calls' signatures and item ids.
RECORDED = {
    "anthropic": (
        anthropic_reply,
        {
            "provider": "anthropic",
            "model": "claude-opus-4-5",
            "text": "I'll check the order.",
            "reasoning": [
                {"type": "thinking", "thinking": "Look the order up.", "signature": "EqQBCkgIARABGAIiQ"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
            ],
        },
    ),
    "openai": (
        openai_reply,
        {
            "provider": "openai",
            "model": "o4-mini",
            "text": "I'll check the order.",
            "reasoning": [
                {
                    "type": "reasoning",
                    "id": "rs_68a1",
                    "summary": [{"type": "summary_text", "text": "Look it up."}],
                    "encrypted_content": "gAAAAABoofDC",
                }
            ],
            "call_item_ids": {"call_a": "fc_68a1"},
        },
    ),
    "google": (
        google_reply,
        {
            "provider": "google",
            "model": "gemini-3-pro",
            "text": "I'll check both.",
            "reasoning": [{"text": "Both at once.", "thought": True, "thoughtSignature": "CiQB0e2K-thought"}],
            "call_signatures": {"call_a": "CiQB0e2Kb8"},
        },
    ),
    "bedrock": (
        bedrock_reply,
        {
            "provider": "bedrock",
            "model": "anthropic.claude-opus-4-5",
            "text": "I'll check the order.",
            "reasoning": [{"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "EqQBCkgI"}}}],
        },
    ),
}


def replayed_round(response: dict[str, Any], calls: list[dict[str, Any]]) -> pb.Round:
    """The service's structured round of what was recorded, its reasoning replayed (same provider and model)."""
    return pb.Round(
        round_index=response["round_index"],
        provider=response["provider"],
        model=response["model"],
        text=response.get("text", ""),
        reasoning_json=json.dumps(response.get("reasoning", [])) if response.get("reasoning") else "",
        call_signatures=response.get("call_signatures", {}),
        call_item_ids=response.get("call_item_ids", {}),
        calls=[
            pb.ToolCall(
                tool_call_id=c["tool_call_id"],
                tool_name=c["tool_name"],
                arguments_json=json.dumps(c["arguments"]),
                result="shipped",
            )
            for c in calls
        ],
    )


def reasoning_view(message: BaseMessage) -> tuple[Any, ...]:
    """What an AIMessage carries of its reasoning, as its integration reads it."""
    assert isinstance(message, AIMessage)
    content = message.content if isinstance(message.content, list) else []
    blocks = [
        block
        for block in content
        if isinstance(block, dict)
        and block.get("type") in ("thinking", "redacted_thinking", "reasoning", "reasoning_content")
    ]
    fc_ids = {
        block["call_id"]: block["id"]
        for block in content
        if isinstance(block, dict) and block.get("type") == "function_call" and "id" in block
    }
    return blocks, message.additional_kwargs.get(GEMINI_SIGNATURES, {}), fc_ids, message.text


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_a_round_s_reasoning_is_recorded_in_its_provider_s_shapes_and_replayed_where_its_integration_sends_it(
    provider: str,
) -> None:
    reply, expected = RECORDED[provider]
    run = RecordingRun()
    model = scripted(reply(), AIMessage(content="Shipped."))
    agent(model).invoke({"messages": [HumanMessage("Where is A-1?")]}, {"callbacks": [handler_for(run)]})

    # Published before the round's calls, through the contract's checks.
    assert run.types()[:2] == ["ModelResponseReceived", "ToolCallRequested"]
    response = run.events[0]
    assert {key: value for key, value in response.items() if key not in ("type", "round_index")} == expected

    # Replayed: the next request of the turn carries the reasoning where the integration put it.
    calls = [event for event in run.events if event["type"] == "ToolCallRequested"]
    history = pb.GetReplayHistoryResponse(turns=[pb.Turn(run_id="r1", rounds=[replayed_round(response, calls)])])
    replayed = to_langchain_messages(history)
    next_model = scripted(AIMessage(content="Done."))
    agent(next_model).invoke({"messages": [HumanMessage("Where is A-1?"), *replayed]})
    sent = next_model.received[0][1]
    assert reasoning_view(sent) == reasoning_view(model.received[1][1])
    assert sent.tool_calls == model.received[1][1].tool_calls  # type: ignore[attr-defined]


@pytest.mark.parametrize("provider", sorted(RECORDED))
def test_a_model_giving_standard_blocks_records_the_round_as_its_provider_produced_it(provider: str) -> None:
    # output_version="v1": the model's output holds LangChain's standard blocks (reasoning, extras, non_standard);
    # what is recorded is the provider's own shapes all the same, byte for byte.
    reply, expected = RECORDED[provider]
    run = RecordingRun()
    model = scripted(reply(), AIMessage(content="Shipped."), output_version="v1")
    agent(model).invoke({"messages": [HumanMessage("Where is A-1?")]}, {"callbacks": [handler_for(run)]})
    produced = model.received[1][1]
    assert isinstance(produced, AIMessage)
    assert produced.response_metadata["output_version"] == "v1"
    assert {block["type"] for block in produced.content if isinstance(block, dict)} <= STANDARD_BLOCK_TYPES

    response = run.events[0]
    assert response["type"] == "ModelResponseReceived"
    assert {key: value for key, value in response.items() if key not in ("type", "round_index")} == expected

    # Replayed in the provider's own shapes, which LangChain reads as the same standard blocks the model gave.
    calls = [event for event in run.events if event["type"] == "ToolCallRequested"]
    history = pb.GetReplayHistoryResponse(turns=[pb.Turn(run_id="r1", rounds=[replayed_round(response, calls)])])
    [replayed, *_] = to_langchain_messages(history)
    assert standard_reasoning(replayed) == standard_reasoning(produced)


STANDARD_BLOCK_TYPES = {"reasoning", "text", "tool_call", "non_standard"}


def standard_reasoning(message: BaseMessage) -> list[dict[str, Any]]:
    """The reasoning blocks of a message as LangChain's standard content shows them (its index is LangChain's)."""
    assert isinstance(message, AIMessage)
    blocks = [dict(block) for block in message.content_blocks if block["type"] in ("reasoning", "non_standard")]
    return [{key: value for key, value in block.items() if key != "index"} for block in blocks]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # A model output without tool calls is no round: nothing to record.
        (
            AIMessage(
                content=[{"type": "thinking", "thinking": "x", "signature": "s"}],
                response_metadata={"model_provider": "anthropic", "model_name": "m"},
            ),
            None,
        ),
        # No provider to tell: nothing is recorded (reasoning goes back only to where it came from).
        (AIMessage(content="", tool_calls=[ORDER_CALL], response_metadata={"model_name": "m"}), None),
        # No model name, and none asked for.
        (AIMessage(content=[{"type": "thinking", "thinking": "x", "signature": "s"}], tool_calls=[ORDER_CALL]), None),
        # A provider's output without reasoning state or text.
        (
            AIMessage(
                content="",
                tool_calls=[ORDER_CALL],
                response_metadata={"model_provider": "anthropic", "model_name": "m"},
            ),
            None,
        ),
        # Its text alone (a model that does not reason): recorded with no items.
        (
            AIMessage(
                content="On it.",
                tool_calls=[ORDER_CALL],
                response_metadata={"model_provider": "openai", "model_name": "m"},
            ),
            ("openai", "m", [], {}, {}),
        ),
        # langchain-openai's older output: one reasoning item in additional_kwargs, the fc_ ids beside it.
        (
            AIMessage(
                content="",
                tool_calls=[ORDER_CALL],
                additional_kwargs={"reasoning": {"id": "rs_1", "summary": []}, OPENAI_CALL_IDS: {"call_a": "fc_1"}},
                response_metadata={"model_name": "o3"},
            ),
            ("openai", "o3", [{"type": "reasoning", "id": "rs_1", "summary": []}], {}, {"call_a": "fc_1"}),
        ),
        # A streamed block's index is LangChain's, not the provider's; a signature of a call not in the output is not.
        (
            AIMessage(
                content=[{"type": "thinking", "thinking": "t", "index": 0}],
                tool_calls=[ORDER_CALL],
                additional_kwargs={GEMINI_SIGNATURES: {"call_a": "sig", "call_z": "other"}},
                response_metadata={"model_name": "gemini-3-flash"},
            ),
            ("google", "gemini-3-flash", [{"text": "t", "thought": True}], {"call_a": "sig"}, {}),
        ),
        # A redacted Converse reasoning block.
        (
            AIMessage(
                content=[{"type": "reasoning_content", "reasoning_content": {"redacted_content": "b64"}}],
                tool_calls=[ORDER_CALL],
                response_metadata={"model_name": "claude-on-bedrock"},
            ),
            ("bedrock", "claude-on-bedrock", [{"reasoningContent": {"redactedContent": "b64"}}], {}, {}),
        ),
    ],
)
def test_what_a_model_output_records_of_its_reasoning(message: AIMessage, expected: tuple[Any, ...] | None) -> None:
    reasoning = reasoning_of(message)
    if expected is None:
        assert reasoning is None
    else:
        assert reasoning is not None
        recorded = (reasoning.provider, reasoning.model, list(reasoning.items), dict(reasoning.call_signatures))
        assert (*recorded, dict(reasoning.call_item_ids)) == expected


def test_a_gemini_round_replayed_with_the_placeholder_carries_it_on_its_first_call() -> None:
    round_ = pb.Round(
        provider="google",
        model="gemini-3-pro",
        reasoning_placeholder=True,
        calls=[
            pb.ToolCall(tool_call_id="call_a", tool_name="get_order", arguments_json="{}", result="x"),
            pb.ToolCall(tool_call_id="call_b", tool_name="get_order", arguments_json="{}", result="y"),
        ],
    )
    [message, *_] = to_langchain_messages(pb.GetReplayHistoryResponse(turns=[pb.Turn(rounds=[round_])]))
    assert message.additional_kwargs == {GEMINI_SIGNATURES: {"call_a": GEMINI_PLACEHOLDER_SIGNATURE}}


def test_a_round_replayed_without_its_reasoning_is_a_plain_ai_message_with_its_text() -> None:
    round_ = pb.Round(
        provider="anthropic",
        model="claude-opus-4-5",
        text="I'll check.",
        reasoning_omitted=pb.REASONING_OMISSION_EXPIRED,
        calls=[pb.ToolCall(tool_call_id="call_a", tool_name="get_order", arguments_json="{}", result="x")],
    )
    [message, _] = to_langchain_messages(pb.GetReplayHistoryResponse(turns=[pb.Turn(rounds=[round_])]))
    assert (message.content, message.additional_kwargs, message.response_metadata) == ("I'll check.", {}, {})


# Any reasoning of each provider, recorded then replayed, comes back as the integration had it, byte for byte.
texts = st.text(max_size=30)
signatures = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", min_size=1, max_size=40
)


@st.composite
def replies(draw: st.DrawFn) -> AIMessage:
    provider = draw(st.sampled_from(["anthropic", "openai", "google", "bedrock"]))
    calls = [call(f"call_{n}", "get_order", {"order_id": str(n)}) for n in range(draw(st.integers(1, 3)))]
    thoughts = draw(st.lists(st.tuples(texts, signatures), min_size=0, max_size=3))
    text = draw(texts)
    text_blocks = [{"type": "text", "text": text}] if text else []
    extra: dict[str, Any] = {}
    if provider == "anthropic":
        content: list[Any] = [{"type": "thinking", "thinking": t, "signature": s} for t, s in thoughts]
        integration = "anthropic"
    elif provider == "openai":
        # An item's summary has any number of parts (none when the model summarized nothing).
        content = [
            {
                "type": "reasoning",
                "id": f"rs_{n}",
                "summary": [{"type": "summary_text", "text": part} for part in [t, *draw(st.lists(texts, max_size=2))]][
                    : draw(st.integers(0, 3))
                ],
                "encrypted_content": s,
            }
            for n, (t, s) in enumerate(thoughts)
        ]
        if thoughts:
            content += [
                {
                    "type": "function_call",
                    "id": f"fc_{c['id']}",
                    "call_id": c["id"],
                    "name": c["name"],
                    "arguments": json.dumps(c["args"]),
                }
                for c in calls
            ]
        integration = "openai"
    elif provider == "google":
        content = [{"type": "thinking", "thinking": t, "signature": s} for t, s in thoughts]
        signed = draw(st.lists(st.sampled_from([c["id"] for c in calls]), unique=True))
        extra = {GEMINI_SIGNATURES: {c: draw(signatures) for c in signed}} if signed else {}
        integration = "google_genai"
    else:
        content = [{"type": "reasoning_content", "reasoning_content": {"text": t, "signature": s}} for t, s in thoughts]
        integration = "bedrock_converse"
    return AIMessage(
        content=[*content[: len(thoughts)], *text_blocks, *content[len(thoughts) :]],
        tool_calls=calls,
        additional_kwargs=extra,
        response_metadata={"model_provider": integration, "model_name": f"{provider}-model"},
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies())
def test_reasoning_recorded_then_replayed_comes_back_as_the_integration_had_it(reply: AIMessage) -> None:
    run = RecordingRun()
    agent(scripted(reply, AIMessage(content="ok"))).invoke(
        {"messages": [HumanMessage("go")]}, {"callbacks": [handler_for(run)]}
    )
    responses = [event for event in run.events if event["type"] == "ModelResponseReceived"]
    calls = [event for event in run.events if event["type"] == "ToolCallRequested"]
    if not responses:
        # Nothing was recorded only when the output carried no reasoning state, no signatures and no text.
        assert reasoning_view(reply) == ([], {}, {}, "")
        return
    [response] = responses
    [replayed, *_] = to_langchain_messages(
        pb.GetReplayHistoryResponse(turns=[pb.Turn(rounds=[replayed_round(response, calls)])])
    )
    # The blocks byte for byte, key order included; the signatures and ids by call (a map has no order).
    (blocks, *rest), (expected_blocks, *expected_rest) = reasoning_view(replayed), reasoning_view(reply)
    assert json.dumps(blocks) == json.dumps(expected_blocks)
    assert rest == expected_rest


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reply=replies())
def test_a_round_records_the_same_whether_its_model_gives_provider_or_standard_blocks(reply: AIMessage) -> None:
    def recorded(output_version: str | None) -> list[dict[str, Any]]:
        run = RecordingRun()
        agent(scripted(reply, AIMessage(content="ok"), output_version=output_version)).invoke(
            {"messages": [HumanMessage("go")]}, {"callbacks": [handler_for(run)]}
        )
        return [event for event in run.events if event["type"] == "ModelResponseReceived"]

    provider_blocks, standard_blocks = recorded(None), recorded("v1")
    assert json.dumps(standard_blocks) == json.dumps(provider_blocks)
