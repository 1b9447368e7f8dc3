"""The PydanticAI adapter and Gemini's and OpenAI Responses' reasoning: a round recorded from the parts PydanticAI's
Google and OpenAI Responses models produce, replayed in the ``gemini`` / ``openai-responses`` format, comes back as
those same parts, and the real models' own request mappings (no network) send it as their APIs require."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIResponsesModel
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider

from toolhistory.events import PublishedEvent, RunScope
from toolhistory.publisher import PendingEvent, RunPublisher, prepare_events
from toolhistory.pydantic_ai import REASONING_FORMATS, from_replay_messages, recorded_run, to_message_history
from toolhistory.pydantic_ai._reasoning import response_of

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

SCOPE = RunScope(tenant_id="t1", conversation_id="c1", channel="web", run_id="run-1")


class KeptRun(RunPublisher):
    """The package's RunPublisher over a send function that prepares each event as the publisher does (the
    contract's checks included) and keeps its own fields instead of producing it."""

    def __init__(self) -> None:
        super().__init__(SCOPE, self._send)
        self.events: list[dict[str, Any]] = []

    def _send(self, pending: Sequence[PendingEvent]) -> list[PublishedEvent]:
        published = []
        for event, waiting in zip(prepare_events(self.scope, pending), pending, strict=True):
            self.events.append(json.loads(event.value))
            published.append(PublishedEvent(f"e{len(self.events)}", waiting.type, 0, len(self.events) - 1, ""))
        return published


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_the_reasoning_formats_name_a_format_per_provider_pydantic_ai_reads() -> None:
    assert REASONING_FORMATS == {
        "bedrock": "bedrock-converse",
        "anthropic": "anthropic",
        "google": "gemini",
        "openai": "openai-responses",
    }


THOUGHT_SIGNATURE = b64(b"thought-signature")
CALL_SIGNATURE = b64(b"call-signature")

# What the service replays for a round (docs/grpc-api.md), and the messages PydanticAI's own models keep for it.
REPLAY_CASES: list[tuple[str, list[dict[str, Any]], list[ModelMessage]]] = [
    (
        "gemini: a signed thought, the text, two parallel calls (only the first signed), an object and an error result",
        [
            {
                "role": "model",
                "parts": [
                    {"text": "Both at once.", "thought": True, "thoughtSignature": THOUGHT_SIGNATURE},
                    {"text": "I'll check."},
                    {
                        "functionCall": {"id": "c1", "name": "lookup", "args": {"id": 1}},
                        "thoughtSignature": CALL_SIGNATURE,
                    },
                    {"functionCall": {"id": "c2", "name": "lookup", "args": {"id": 2}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "c1", "name": "lookup", "response": {"status": "shipped"}}},
                    {"functionResponse": {"id": "c2", "name": "lookup", "response": {"error": "no such order"}}},
                ],
            },
        ],
        [
            ModelResponse(
                parts=[
                    ThinkingPart(
                        "Both at once.",
                        provider_name="google",
                        provider_details={"thought_signature": THOUGHT_SIGNATURE},
                    ),
                    TextPart("I'll check."),
                    ToolCallPart(
                        "lookup",
                        {"id": 1},
                        tool_call_id="c1",
                        provider_name="google",
                        provider_details={"thought_signature": CALL_SIGNATURE},
                    ),
                    ToolCallPart("lookup", {"id": 2}, tool_call_id="c2"),
                ],
                provider_name="google",
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart("lookup", {"status": "shipped"}, tool_call_id="c1"),
                    ToolReturnPart("lookup", "no such order", tool_call_id="c2", outcome="failed"),
                ]
            ),
        ],
    ),
    (
        "gemini: the placeholder signature is left to PydanticAI, a non-object result comes back unwrapped",
        [
            {
                "role": "model",
                "parts": [
                    {
                        "functionCall": {"id": "c1", "name": "count", "args": {}},
                        "thoughtSignature": "skip_thought_signature_validator",
                    }
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "count", "response": {"output": 3}}}]},
        ],
        [
            ModelResponse(parts=[ToolCallPart("count", {}, tool_call_id="c1")], provider_name="google"),
            ModelRequest(parts=[ToolReturnPart("count", 3, tool_call_id="c1")]),
        ],
    ),
    (
        "openai-responses: a reasoning item of two summaries, the text, a call with its fc_ id, its output",
        [
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Second."}],
                "encrypted_content": "gAAAAABo",
            },
            {"type": "message", "role": "assistant", "content": "I'll check."},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "lookup", "arguments": '{"id":1}'},
            {"type": "function_call_output", "call_id": "c1", "output": "shipped"},
        ],
        [
            ModelResponse(
                parts=[
                    ThinkingPart("First.", id="rs_1", signature="gAAAAABo", provider_name="openai"),
                    ThinkingPart("Second.", id="rs_1", provider_name="openai"),
                    TextPart("I'll check."),
                    ToolCallPart("lookup", '{"id":1}', tool_call_id="c1", id="fc_1", provider_name="openai"),
                ],
                provider_name="openai",
            ),
            ModelRequest(parts=[ToolReturnPart("lookup", "shipped", tool_call_id="c1")]),
        ],
    ),
    (
        "openai-responses: encrypted reasoning without summary, then a round without reasoning (no fc_ id)",
        [
            {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAAABp"},
            {"type": "function_call", "id": "fc_2", "call_id": "c1", "name": "a", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1"},
            {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c2", "output": "2"},
        ],
        [
            ModelResponse(
                parts=[
                    ThinkingPart("", id="rs_2", signature="gAAAAABp", provider_name="openai"),
                    ToolCallPart("a", "{}", tool_call_id="c1", id="fc_2", provider_name="openai"),
                ],
                provider_name="openai",
            ),
            ModelRequest(parts=[ToolReturnPart("a", "1", tool_call_id="c1")]),
            ModelResponse(
                parts=[ToolCallPart("b", "{}", tool_call_id="c2", provider_name="openai")], provider_name="openai"
            ),
            ModelRequest(parts=[ToolReturnPart("b", "2", tool_call_id="c2")]),
        ],
    ),
]


def _comparable(messages: Sequence[ModelMessage]) -> list[Any]:
    """Messages without the fields each construction stamps anew (timestamps)."""
    out: list[Any] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            out.append(("response", message.provider_name, message.parts))
        else:
            out.append(("request", [(p.tool_name, p.content, p.tool_call_id, p.outcome) for p in message.parts]))  # type: ignore[union-attr]
    return out


@pytest.mark.parametrize(("case", "segment", "expected"), REPLAY_CASES, ids=[c[0] for c in REPLAY_CASES])
def test_a_replayed_segment_becomes_the_messages_pydantic_ai_s_own_model_keeps(
    case: str, segment: list[dict[str, Any]], expected: list[ModelMessage]
) -> None:
    assert _comparable(from_replay_messages(segment)) == _comparable(expected), case


def test_segments_replay_never_gives_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="OpenAI Responses item replay never gives"):
        from_replay_messages([{"type": "web_search_call", "id": "ws_1"}])
    with pytest.raises(ValueError, match="answers no replayed call"):
        from_replay_messages([{"type": "function_call_output", "call_id": "nope", "output": "x"}])
    with pytest.raises(ValueError, match="functionResponse without id"):
        from_replay_messages(
            [
                {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "a", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "a", "response": {}}}]},
            ]
        )


class _History:
    def __init__(self, fmt: str, messages: list[dict[str, Any]]) -> None:
        self.format = fmt
        self.turns = [_Turn(messages)]


class _Turn:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages


def test_to_message_history_reads_the_gemini_and_openai_responses_formats() -> None:
    for fmt, segment in (("gemini", REPLAY_CASES[0][1]), ("openai-responses", REPLAY_CASES[2][1])):
        assert _comparable(to_message_history(_History(fmt, segment))) == _comparable(from_replay_messages(segment))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='reads the "bedrock-converse" replay format, got "openai"'):
        to_message_history(_History("openai", []))  # type: ignore[arg-type]


# The real models' request mappings, called on the replayed history (no request is sent).
def _gemini_request(history: list[ModelMessage]) -> list[Any]:
    model = GoogleModel("gemini-3-pro-preview", provider=GoogleProvider(api_key="unused"))
    _, contents = asyncio.run(
        model._map_messages([*history, ModelRequest.user_text_prompt("go on")], ModelRequestParameters())
    )
    return contents


def _responses_request(history: list[ModelMessage]) -> list[Any]:
    model = OpenAIResponsesModel("gpt-5", provider=OpenAIProvider(api_key="unused"))
    _, items = asyncio.run(
        model._map_messages([*history, ModelRequest.user_text_prompt("go on")], {}, ModelRequestParameters())
    )
    return items


def test_pydantic_ai_s_google_model_sends_the_replayed_signatures_on_their_own_parts() -> None:
    contents = _gemini_request(from_replay_messages(REPLAY_CASES[0][1]))
    [parts] = [content["parts"] for content in contents if content["role"] == "model"]
    assert parts[0] == {"text": "Both at once.", "thought": True, "thought_signature": b"thought-signature"}
    assert parts[2]["function_call"]["id"] == "c1"
    assert parts[2]["thought_signature"] == b"call-signature"
    assert "thought_signature" not in parts[3]


def test_pydantic_ai_s_responses_model_sends_the_reasoning_item_right_before_its_call_with_its_fc_id() -> None:
    items = _responses_request(from_replay_messages(REPLAY_CASES[2][1]))
    kinds = [item.get("type") for item in items]
    reasoning_at = kinds.index("reasoning")
    call = items[kinds.index("function_call")]
    assert items[reasoning_at]["id"] == "rs_1"
    assert items[reasoning_at]["encrypted_content"] == "gAAAAABo"
    assert [s["text"] for s in items[reasoning_at]["summary"]] == ["First.", "Second."]
    assert (call["id"], call["call_id"]) == ("fc_1", "c1")
    assert reasoning_at < kinds.index("function_call")


# Recorded from what PydanticAI's models produce, replayed as the service renders it, and handed back unchanged.
def _round_model(parts: list[Any], provider: str) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1], ModelRequest) and any(isinstance(p, UserPromptPart) for p in messages[-1].parts):
            return ModelResponse(parts=parts, provider_name=provider)
        return ModelResponse(parts=[TextPart("Done.")])

    return model


def _agent(model: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> Agent[None, str]:
    agent = Agent(FunctionModel(model, model_name="a-reasoning-model"))

    @agent.tool_plain
    def lookup(order_id: str) -> str:
        return f"order {order_id}: shipped"

    return agent


def gemini_replay(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's gemini rendering of one recorded round (thought parts, text, signed calls)."""
    response = next((e for e in events if e["type"] == "ModelResponseReceived"), {})
    calls = [e for e in events if e["type"] == "ToolCallRequested"]
    results = {e["toolCallId"]: e for e in events if e["type"] == "ToolResultReceived"}
    signatures = response.get("callSignatures", {})
    return [
        {
            "role": "model",
            "parts": [
                *response.get("reasoning", []),
                *([{"text": response["text"]}] if response.get("text") else []),
                *(
                    {
                        "functionCall": {"id": c["toolCallId"], "name": c["toolName"], "args": c["arguments"]},
                        **({"thoughtSignature": signatures[c["toolCallId"]]} if c["toolCallId"] in signatures else {}),
                    }
                    for c in calls
                ),
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": c["toolCallId"],
                        "name": c["toolName"],
                        "response": {"output": results[c["toolCallId"]]["result"]},
                    }
                }
                for c in calls
            ],
        },
    ]


def responses_replay(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's openai-responses rendering of one recorded round (reasoning items, text, calls with fc_ ids)."""
    response = next((e for e in events if e["type"] == "ModelResponseReceived"), {})
    calls = [e for e in events if e["type"] == "ToolCallRequested"]
    results = {e["toolCallId"]: e for e in events if e["type"] == "ToolResultReceived"}
    item_ids = response.get("callItemIds", {}) if response.get("reasoning") else {}
    return [
        *response.get("reasoning", []),
        *([{"type": "message", "role": "assistant", "content": response["text"]}] if response.get("text") else []),
        *(
            {
                "type": "function_call",
                **({"id": item_ids[c["toolCallId"]]} if c["toolCallId"] in item_ids else {}),
                "call_id": c["toolCallId"],
                "name": c["toolName"],
                "arguments": json.dumps(c["arguments"], separators=(",", ":")),
            }
            for c in calls
        ),
        *(
            {"type": "function_call_output", "call_id": c["toolCallId"], "output": results[c["toolCallId"]]["result"]}
            for c in calls
        ),
    ]


SIGNATURE_BYTES = st.binary(min_size=1, max_size=24).map(b64)
TEXT = st.text(min_size=1, max_size=20)


@st.composite
def gemini_rounds(draw: st.DrawFn) -> list[Any]:
    """A response as PydanticAI's Google model makes it: thoughts (signed or not), then 1-3 calls, the first
    maybe signed."""
    thoughts = draw(
        st.lists(
            st.builds(
                lambda text, sig: (
                    ThinkingPart(text, provider_name="google", provider_details={"thought_signature": sig})
                    if sig
                    else ThinkingPart(text)
                ),
                TEXT,
                st.one_of(st.none(), SIGNATURE_BYTES),
            ),
            max_size=3,
        )
    )
    first_signature = draw(st.one_of(st.none(), SIGNATURE_BYTES))
    calls: list[Any] = []
    for i in range(draw(st.integers(1, 3))):
        signature = first_signature if i == 0 else None
        calls.append(
            ToolCallPart(
                "lookup",
                {"order_id": f"A-{i}"},
                tool_call_id=f"call_{i}",
                **(
                    {"provider_name": "google", "provider_details": {"thought_signature": signature}}
                    if signature
                    else {}
                ),
            )
        )
    return [*thoughts, *calls]


@st.composite
def openai_rounds(draw: st.DrawFn) -> list[Any]:
    """A response as PydanticAI's OpenAI Responses model makes it: reasoning items (parts per summary under the
    item's id, the encrypted content on the first), then 1-3 calls with their fc_ ids."""
    parts: list[Any] = []
    for n in range(draw(st.integers(1, 2))):
        summaries = draw(st.lists(TEXT, max_size=3))
        encrypted = draw(SIGNATURE_BYTES)
        if not summaries:
            parts.append(ThinkingPart("", id=f"rs_{n}", signature=encrypted, provider_name="openai"))
        for i, text in enumerate(summaries):
            parts.append(
                ThinkingPart(text, id=f"rs_{n}", signature=encrypted if i == 0 else None, provider_name="openai")
            )
    for i in range(draw(st.integers(1, 3))):
        parts.append(
            ToolCallPart(
                "lookup", f'{{"order_id":"A-{i}"}}', tool_call_id=f"call_{i}", id=f"fc_{i}", provider_name="openai"
            )
        )
    return parts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=st.one_of(gemini_rounds().map(lambda p: ("google", p)), openai_rounds().map(lambda p: ("openai", p))))
def test_a_round_recorded_then_replayed_is_the_round_the_model_produced(drawn: tuple[str, list[Any]]) -> None:
    provider, parts = drawn
    run = KeptRun()
    asyncio.run(recorded_run(run, _agent(_round_model(parts, provider)), "go", assistant_message_id="a"))
    segment = gemini_replay(run.events) if provider == "google" else responses_replay(run.events)
    [response, request] = from_replay_messages(segment)
    assert isinstance(response, ModelResponse)
    assert isinstance(request, ModelRequest)
    assert response.provider_name == provider
    if provider == "google":
        assert response.parts == parts
    else:
        # PydanticAI's args as the JSON text it was given: compare the parsed arguments.
        assert [p for p in response.parts if isinstance(p, ThinkingPart)] == [
            p for p in parts if isinstance(p, ThinkingPart)
        ]
        calls = [(p.tool_call_id, p.id, p.args_as_dict()) for p in response.parts if isinstance(p, ToolCallPart)]
        assert calls == [(p.tool_call_id, p.id, p.args_as_dict()) for p in parts if isinstance(p, ToolCallPart)]


@pytest.mark.parametrize("provider_name", ["google", "google-cloud", "google-gla", "google-vertex"])
def test_a_google_thought_s_signature_in_its_provider_details_is_recorded_for_google(provider_name: str) -> None:
    response = ModelResponse(
        parts=[
            ThinkingPart("Hm.", provider_name=provider_name, provider_details={"thought_signature": THOUGHT_SIGNATURE}),
            ToolCallPart(
                "lookup",
                {},
                tool_call_id="c1",
                provider_name=provider_name,
                provider_details={"thought_signature": CALL_SIGNATURE},
            ),
        ],
        model_name="gemini-3-pro-preview",
        provider_name=provider_name,
    )
    recorded = response_of(response, lambda _: False)
    assert recorded is not None
    assert (recorded.reasoning.provider, recorded.reasoning.items, recorded.reasoning.call_signatures) == (
        "google",
        ({"text": "Hm.", "thought": True, "thoughtSignature": THOUGHT_SIGNATURE},),
        {"c1": CALL_SIGNATURE},
    )
