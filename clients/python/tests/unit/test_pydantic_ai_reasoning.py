"""The PydanticAI adapter and reasoning models: a response's ThinkingParts (content, id, signature, provider) recorded
with its round in the provider's own shapes, and ThinkingParts handed back in place so that the next request carries
them. Real agents on PydanticAI's FunctionModel; the recording goes through the package's RunPublisher and the
contract's checks."""

from __future__ import annotations

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
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from toolhistory.events import PublishedEvent, RunScope
from toolhistory.publisher import PendingEvent, RunPublisher, prepare_events
from toolhistory.pydantic_ai import from_replay_messages, recorded_run, run_record
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

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event["type"] == kind]


def never_output(tool_name: str) -> bool:
    return False


def responding(*parts: Any, provider: str | None) -> ModelResponse:
    return ModelResponse(parts=list(parts), model_name="the-model", provider_name=provider)


CALL = ToolCallPart("lookup_order", {"order_id": "A-1"}, tool_call_id="call_a")


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (
            responding(
                ThinkingPart("Look it up.", signature="EqQBCkgI", provider_name="anthropic"),
                ThinkingPart("", id="redacted_thinking", signature="EmwKAhgB", provider_name="anthropic"),
                TextPart("I'll check."),
                CALL,
                provider="anthropic",
            ),
            {
                "provider": "anthropic",
                "text": "I'll check.",
                "reasoning": [
                    {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBCkgI"},
                    {"type": "redacted_thinking", "data": "EmwKAhgB"},
                ],
            },
        ),
        (
            # One reasoning item per id: its summaries in order, its encrypted content; the call's fc_ id.
            responding(
                ThinkingPart("First.", id="rs_1", provider_name="openai"),
                ThinkingPart("Second.", id="rs_1", signature="gAAAAABo", provider_name="openai"),
                ToolCallPart("lookup_order", {}, tool_call_id="call_a", id="fc_1", provider_name="openai"),
                provider="openai",
            ),
            {
                "provider": "openai",
                "reasoning": [
                    {
                        "type": "reasoning",
                        "id": "rs_1",
                        "summary": [
                            {"type": "summary_text", "text": "First."},
                            {"type": "summary_text", "text": "Second."},
                        ],
                        "encrypted_content": "gAAAAABo",
                    }
                ],
                "callItemIds": {"call_a": "fc_1"},
            },
        ),
        (
            responding(
                ThinkingPart("Both at once.", signature="CiQB-thought", provider_name="google-gla"),
                ToolCallPart(
                    "lookup_order",
                    {},
                    tool_call_id="call_a",
                    provider_name="google-gla",
                    provider_details={"thought_signature": "CiQB0e2K"},
                ),
                ToolCallPart("lookup_order", {}, tool_call_id="call_b"),
                provider="google-gla",
            ),
            {
                "provider": "google",
                "reasoning": [{"text": "Both at once.", "thought": True, "thoughtSignature": "CiQB-thought"}],
                "callSignatures": {"call_a": "CiQB0e2K"},
            },
        ),
        (
            responding(
                ThinkingPart("Look it up.", signature="EqQB", provider_name="bedrock"),
                ThinkingPart("", id="redacted_content", signature="b64data", provider_name="bedrock"),
                CALL,
                provider="bedrock",
            ),
            {
                "provider": "bedrock",
                "reasoning": [
                    {"reasoningContent": {"reasoningText": {"text": "Look it up.", "signature": "EqQB"}}},
                    {"reasoningContent": {"redactedContent": "b64data"}},
                ],
            },
        ),
        # A provider the contract has no name for is recorded by its own name, its parts as they are.
        (
            responding(ThinkingPart("hm", id="t1", provider_name="mistral"), CALL, provider="mistral"),
            {"provider": "mistral", "reasoning": [{"type": "thinking", "thinking": "hm", "id": "t1"}]},
        ),
        # Text alone (a model that does not reason).
        (responding(TextPart("On it."), CALL, provider="openai"), {"provider": "openai", "text": "On it."}),
        # Nothing beside the calls, or no provider to send it back to: nothing is recorded.
        (responding(CALL, provider="anthropic"), None),
        (responding(ThinkingPart("hm", signature="s"), CALL, provider=None), None),
    ],
)
def test_what_a_response_records_beside_its_calls(response: ModelResponse, expected: dict[str, Any] | None) -> None:
    recorded = response_of(response, never_output)
    if expected is None:
        assert recorded is None
        return
    assert recorded is not None
    reasoning = recorded.reasoning
    own = {
        "provider": reasoning.provider,
        **({"text": recorded.text} if recorded.text else {}),
        **({"reasoning": list(reasoning.items)} if reasoning.items else {}),
        **({"callSignatures": dict(reasoning.call_signatures)} if reasoning.call_signatures else {}),
        **({"callItemIds": dict(reasoning.call_item_ids)} if reasoning.call_item_ids else {}),
    }
    assert own == expected
    assert reasoning.model == "the-model"


def thinking_round(
    parts: list[ThinkingPart], provider: str = "bedrock"
) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1], ModelRequest) and any(isinstance(p, UserPromptPart) for p in messages[-1].parts):
            return ModelResponse(parts=[*parts, TextPart("I'll check."), CALL], provider_name=provider)
        return ModelResponse(parts=[TextPart("Shipped.")])

    return model


def agent_of(model: Callable[[list[ModelMessage], AgentInfo], ModelResponse]) -> Agent[None, str]:
    # FunctionModel names each response by its own model name.
    agent = Agent(FunctionModel(model, model_name="claude-on-bedrock"))

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return f"order {order_id}: shipped"

    return agent


def anthropic_replay(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's anthropic rendering of one recorded round (its thinking first, then its text, then its calls)."""
    [response] = [e for e in events if e["type"] == "ModelResponseReceived"]
    calls = [e for e in events if e["type"] == "ToolCallRequested"]
    results = {e["toolCallId"]: e for e in events if e["type"] == "ToolResultReceived"}
    return [
        {
            "role": "assistant",
            "content": [
                *response.get("reasoning", []),
                *([{"type": "text", "text": response["text"]}] if response.get("text") else []),
                *(
                    {"type": "tool_use", "id": c["toolCallId"], "name": c["toolName"], "input": c["arguments"]}
                    for c in calls
                ),
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": c["toolCallId"],
                    "content": results[c["toolCallId"]]["result"],
                    "is_error": False,
                }
                for c in calls
            ],
        },
    ]


REDACTED_IDS = {"bedrock": "redacted_content", "anthropic": "redacted_thinking"}


def replay_of(provider: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return anthropic_replay(events) if provider == "anthropic" else converse_replay(events)


def converse_replay(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The service's bedrock-converse rendering of one recorded round (its reasoning first, then its text, then its
    calls; docs/grpc-api.md)."""
    [response] = [e for e in events if e["type"] == "ModelResponseReceived"]
    calls = [e for e in events if e["type"] == "ToolCallRequested"]
    results = {e["toolCallId"]: e for e in events if e["type"] == "ToolResultReceived"}
    return [
        {
            "role": "assistant",
            "content": [
                *response.get("reasoning", []),
                *([{"text": response["text"]}] if response.get("text") else []),
                *(
                    {"toolUse": {"toolUseId": c["toolCallId"], "name": c["toolName"], "input": c["arguments"]}}
                    for c in calls
                ),
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": c["toolCallId"],
                        "content": [{"text": results[c["toolCallId"]]["result"]}],
                        "status": "success",
                    }
                }
                for c in calls
            ],
        },
    ]


@pytest.mark.parametrize("provider", ["bedrock", "anthropic"])
async def test_a_round_s_thinking_goes_back_in_place_and_the_next_request_carries_it(provider: str) -> None:
    thinking = [
        ThinkingPart("Look it up.", signature="EqQBCkgI", provider_name=provider),
        ThinkingPart("", id=REDACTED_IDS[provider], signature="b64data", provider_name=provider),
    ]
    run = KeptRun()
    await recorded_run(run, agent_of(thinking_round(thinking, provider)), "Where is A-1?", assistant_message_id="a-1")
    assert [e["type"] for e in run.events][:2] == ["ModelResponseReceived", "ToolCallRequested"]
    [response] = run.of("ModelResponseReceived")
    assert (response["provider"], response["model"], response["text"]) == (provider, "claude-on-bedrock", "I'll check.")

    replayed = from_replay_messages(replay_of(provider, run.events))
    seen: list[list[ModelMessage]] = []

    def next_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=[TextPart("Done.")])

    await agent_of(next_model).run("And now?", message_history=replayed)
    [sent_round] = [m for m in seen[0] if isinstance(m, ModelResponse)]
    assert sent_round.provider_name == provider
    assert sent_round.parts == [*thinking, TextPart("I'll check."), ToolCallPart(**_call_fields(CALL))]


def _call_fields(call: ToolCallPart) -> dict[str, Any]:
    return {"tool_name": call.tool_name, "args": call.args, "tool_call_id": call.tool_call_id}


def test_the_round_of_a_run_record_carries_its_response() -> None:
    result = agent_of(thinking_round([ThinkingPart("hm", signature="s", provider_name="bedrock")])).run_sync("go")
    [round_] = run_record(result.new_messages()).rounds
    assert round_.response is not None
    assert round_.response.reasoning.items == (
        {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "s"}}},
    )


# Any Bedrock or Anthropic thinking, recorded and replayed in its provider's format, comes back as the ThinkingParts
# the model produced, in place.
SIGNATURES = st.text(alphabet="ABCDEFabcdef0123456789+/=", min_size=1, max_size=20)


@st.composite
def thinking_parts(draw: st.DrawFn) -> tuple[str, list[ThinkingPart]]:
    provider = draw(st.sampled_from(sorted(REDACTED_IDS)))
    # Anthropic's thinking always has its signature; Bedrock's may lack one.
    signature = SIGNATURES if provider == "anthropic" else st.one_of(st.none(), SIGNATURES)
    plain = st.builds(
        lambda text, sig: ThinkingPart(text, signature=sig, provider_name=provider), st.text(max_size=20), signature
    )
    redacted = st.builds(
        lambda data: ThinkingPart("", id=REDACTED_IDS[provider], signature=data, provider_name=provider), SIGNATURES
    )
    return provider, draw(st.lists(st.one_of(plain, redacted), min_size=1, max_size=4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=thinking_parts())
def test_thinking_recorded_then_replayed_is_the_thinking_the_model_produced(
    drawn: tuple[str, list[ThinkingPart]],
) -> None:
    import asyncio

    provider, parts = drawn
    run = KeptRun()
    asyncio.run(recorded_run(run, agent_of(thinking_round(parts, provider)), "go", assistant_message_id="a"))
    [response, *_] = from_replay_messages(replay_of(provider, run.events))
    assert isinstance(response, ModelResponse)
    assert [p for p in response.parts if isinstance(p, ThinkingPart)] == parts


def test_an_anthropic_error_result_is_a_failed_return_and_a_block_replay_never_gives_is_refused() -> None:
    segment = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "charge", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "declined", "is_error": True}],
        },
    ]
    [_, request] = from_replay_messages(segment)
    assert isinstance(request, ModelRequest)
    assert [(p.content, p.outcome) for p in request.parts] == [("declined", "failed")]  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="Anthropic block replay never gives"):
        from_replay_messages([{"role": "assistant", "content": [{"type": "image", "source": {}}]}])
    with pytest.raises(ValueError, match="no tool_result"):
        from_replay_messages([segment[0], {"role": "user", "content": [{"type": "text", "text": "hi"}]}])
