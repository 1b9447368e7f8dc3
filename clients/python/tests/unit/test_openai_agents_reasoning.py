"""The OpenAI Agents SDK adapter and reasoning models: a round's reasoning items recorded with it, and handed back
before the round's calls so that the next request of the same turn carries them. Real runs of the SDK with its own
ScriptedModel, recorded into a RunPublisher double that keeps what it was asked to publish."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pydantic
import pytest
from agents import Agent, ModelResponse, RunConfig, Runner, RunState, TResponseInputItem, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from toolhistory._recording import RecordedResponse, ResponseReasoning
from toolhistory.events import ToolCall, ToolResult
from toolhistory.openai_agents import history_input, recorded_run
from toolhistory.openai_agents._items import response_of

if TYPE_CHECKING:
    from collections.abc import Sequence

NO_TRACING = RunConfig(tracing_disabled=True)
MODEL = "o4-mini"
INPUT_ITEMS: pydantic.TypeAdapter[list[TResponseInputItem]] = pydantic.TypeAdapter(list[TResponseInputItem])


@dataclass
class PublishedRun:
    """A RunPublisher double: what the recorder asked to publish, in order."""

    events: list[tuple[str, Any]] = field(default_factory=list)

    def model_response(self, **fields: Any) -> object:
        self.events.append(("response", fields))
        return None

    def tool_calls(self, calls: Sequence[ToolCall]) -> list[object]:
        self.events.extend(("call", call) for call in calls)
        return []

    def tool_results(self, results: Sequence[ToolResult]) -> list[object]:
        self.events.extend(("result", result) for result in results)
        return []

    def approval_requested(self, **fields: Any) -> object:
        self.events.append(("approval_requested", fields))
        return None

    def approval_decided(self, **fields: Any) -> object:
        self.events.append(("approval_decided", fields))
        return None

    def complete(self, **fields: Any) -> object:
        self.events.append(("complete", fields))
        return None

    def fail(self, **fields: Any) -> object:
        self.events.append(("fail", fields))
        return None

    def of(self, kind: str) -> list[Any]:
        return [value for event, value in self.events if event == kind]

    @property
    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"status": "shipped", "order": order_id}


@function_tool(needs_approval=True)
def refund(amount: int) -> str:
    """Refund an amount (a person approves it first)."""
    return f"refunded {amount}"


def agent_of(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="support", model=model, tools=[lookup_order, refund])


def reasoning(item_id: str, encrypted: str | None = None, summary: str = "Check the order first.") -> Any:
    return ResponseReasoningItem(
        id=item_id,
        type="reasoning",
        summary=[Summary(text=summary, type="summary_text")],
        **({"encrypted_content": encrypted} if encrypted is not None else {}),
    )


def call(name: str, call_id: str, item_id: str, **arguments: Any) -> Any:
    return function_call(name, arguments, call_id=call_id, item_id=item_id)


def usage() -> Usage:
    return Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)


def reasoning_round_model() -> ScriptedModel:
    return ScriptedModel(
        [
            ModelStep(
                output=[
                    reasoning("rs_1", encrypted="gAAAAABo-first"),
                    assistant_message("I'll check both orders.", item_id="msg_0"),
                    call("lookup_order", "call_a", "fc_a", order_id="A-1"),
                    call("lookup_order", "call_b", "fc_b", order_id="B-2"),
                ],
                usage=usage(),
            ),
            ModelStep(output=[assistant_message("Both shipped.", item_id="msg_1")], usage=usage()),
        ]
    )


async def test_a_round_s_reasoning_items_are_recorded_before_its_calls_as_the_sdk_itself_sends_them_back() -> None:
    model = reasoning_round_model()
    run = PublishedRun()
    await recorded_run(
        run,
        agent_of(model),
        "where are A-1 and B-2?",
        assistant_message_id="host-2",
        model=MODEL,
        run_config=NO_TRACING,
    )

    assert run.kinds == ["response", "call", "call", "result", "result", "complete"]
    [response] = run.of("response")
    # What the SDK's own second request of the turn carried back: the recording is the same item, byte for byte.
    sent_back = [item for item in model.calls[1].input if item.get("type") == "reasoning"]
    assert response["reasoning"] == sent_back
    assert json.dumps(response["reasoning"]) == json.dumps(sent_back)
    assert response == {
        "round_index": 0,
        "provider": "openai",
        "model": MODEL,
        "text": "I'll check both orders.",
        "reasoning": [
            {
                "id": "rs_1",
                "summary": [{"text": "Check the order first.", "type": "summary_text"}],
                "type": "reasoning",
                "encrypted_content": "gAAAAABo-first",
            }
        ],
        "call_item_ids": {"call_a": "fc_a", "call_b": "fc_b"},
    }


async def test_a_run_stopped_for_approval_records_the_reasoning_of_the_round_that_waits() -> None:
    model = ScriptedModel(
        [
            ModelStep(
                output=[reasoning("rs_9", encrypted="gAAAAABo-refund"), call("refund", "call_r", "fc_r", amount=30)],
                usage=usage(),
            ),
            ModelStep(output=[assistant_message("Refunded.")], usage=usage()),
        ]
    )
    agent = agent_of(model)
    first = PublishedRun()
    stopped = await recorded_run(
        first, agent, "refund it", assistant_message_id="host-1", model=MODEL, run_config=NO_TRACING
    )
    assert first.kinds == ["response", "call", "approval_requested", "complete"]
    assert first.of("response")[0]["call_item_ids"] == {"call_r": "fc_r"}

    # The resumed run goes on from the state, which carries the reasoning itself: nothing is recorded twice.
    state = await RunState.from_json(agent, stopped.to_state().to_json())
    state.approve(state.get_interruptions()[0])
    second = PublishedRun()
    await recorded_run(second, agent, state, assistant_message_id="host-2", model=MODEL, run_config=NO_TRACING)
    assert "response" not in second.kinds
    assert [item.get("id") for item in model.calls[1].input if item.get("type") == "reasoning"] == ["rs_9"]


def response(*output: Any) -> ModelResponse:
    return ModelResponse(output=list(output), usage=usage(), response_id="resp_1")


@pytest.mark.parametrize(
    ("model_response", "model", "expected"),
    [
        # Nothing beside the calls: nothing to record.
        (response(call("lookup_order", "c1", "fc_1", order_id="A")), MODEL, None),
        # No model name: its reasoning could go back to another model, so it is not recorded.
        (response(reasoning("rs_1"), call("lookup_order", "c1", "fc_1", order_id="A")), None, None),
        (
            response(reasoning("rs_1"), call("lookup_order", "c1", "fc_1", order_id="A")),
            MODEL,
            RecordedResponse(
                ResponseReasoning(
                    "openai",
                    MODEL,
                    (
                        {
                            "id": "rs_1",
                            "summary": [{"text": "Check the order first.", "type": "summary_text"}],
                            "type": "reasoning",
                        },
                    ),
                    call_item_ids={"c1": "fc_1"},
                )
            ),
        ),
        # Text without reasoning (a model that does not reason): the text, and the ids the calls had.
        (
            response(assistant_message("On it."), call("lookup_order", "c1", "fc_1", order_id="A")),
            MODEL,
            RecordedResponse(ResponseReasoning("openai", MODEL, (), call_item_ids={"c1": "fc_1"}), "On it."),
        ),
        # A reasoning item a provider gave as a plain dict, a call without an item id.
        (
            response(
                {"type": "reasoning", "summary": [], "id": "rs_2", "encrypted_content": "e"},
                call("refund", "c2", "", amount=1),
            ),
            MODEL,
            RecordedResponse(
                ResponseReasoning(
                    "openai", MODEL, ({"id": "rs_2", "summary": [], "type": "reasoning", "encrypted_content": "e"},)
                )
            ),
        ),
    ],
)
def test_what_a_response_records_beside_its_calls(
    model_response: ModelResponse, model: str | None, expected: RecordedResponse | None
) -> None:
    recorded = response_of(model_response, model)
    assert recorded == expected
    if recorded is not None:
        # Key order included: each item as the SDK's own replay of the response gives it.
        sdk_replay = [item for item in model_response.to_input_items() if item.get("type") == "reasoning"]
        assert [json.dumps(item) for item in recorded.reasoning.items] == [json.dumps(item) for item in sdk_replay]


# The service's openai-responses rendering of one round with reasoning (docs/grpc-api.md).
REPLAYED_ROUND: list[dict[str, Any]] = [
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "Refund it."}],
        "encrypted_content": "gAAAAABoofDC",
    },
    {"type": "message", "role": "assistant", "content": "I'll refund it."},
    {"type": "function_call", "id": "fc_1", "call_id": "call_refund", "name": "refund", "arguments": '{"amount":30}'},
    {"type": "function_call_output", "call_id": "call_refund", "output": "refunded 30"},
]


def test_history_input_hands_back_the_reasoning_the_text_and_the_fc_ids_as_the_sdk_s_input_items() -> None:
    items = history_input(REPLAYED_ROUND)
    assert items == REPLAYED_ROUND
    # The SDK's own input type takes them (its iterable fields validate as they are read: read them all).
    validated = INPUT_ITEMS.validate_python(items)
    assert json.loads(json.dumps(validated, default=list)) == items


@pytest.mark.parametrize(
    "item",
    [
        {"type": "reasoning", "summary": []},  # no id: no item the API takes back
        {"type": "message", "role": "user", "content": "hi"},  # a replay has no user messages
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]},
    ],
)
def test_history_input_refuses_what_a_replay_never_holds(item: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match='format="openai-responses"'):
        history_input([item])


async def test_the_next_run_s_request_carries_the_replayed_reasoning_before_the_round_s_calls() -> None:
    model = ScriptedModel([[assistant_message("Done.")]])
    user: TResponseInputItem = {"role": "user", "content": "and the refund?"}
    await Runner.run(agent_of(model), [*history_input(REPLAYED_ROUND), user], run_config=NO_TRACING)
    assert model.calls[0].input == [*REPLAYED_ROUND, user]


# Traces of rounds: each a number of reasoning items (0 to 2) and of parallel calls (1 to 3).
rounds_of = st.lists(st.tuples(st.integers(0, 2), st.integers(1, 3)), min_size=1, max_size=4)
encrypted = st.text(alphabet=st.characters(codec="ascii", exclude_categories=("Cc",)), min_size=1, max_size=40)


def scripted(trace: list[tuple[int, int]], secrets: list[str]) -> ScriptedModel:
    steps: list[ModelStep] = []
    number = 0
    for at, (thoughts, calls) in enumerate(trace):
        output: list[Any] = [
            reasoning(f"rs_{at}_{t}", encrypted=secrets[(at + t) % len(secrets)]) for t in range(thoughts)
        ]
        for _ in range(calls):
            output.append(call("lookup_order", f"call_{number}", f"fc_{number}", order_id=str(number)))
            number += 1
        steps.append(ModelStep(output=output, usage=usage()))
    steps.append(ModelStep(output=[assistant_message("done")], usage=usage()))
    return ScriptedModel(steps)


def rendered(run: PublishedRun) -> list[dict[str, Any]]:
    """What the service's openai-responses replay makes of what was recorded (as the domain places it)."""
    responses = {r["round_index"]: r for r in run.of("response")}
    calls, results = run.of("call"), {r.tool_call_id: r for r in run.of("result")}
    items: list[dict[str, Any]] = []
    for index in sorted({c.round_index for c in calls}):
        said = responses.get(index, {})
        items += said.get("reasoning", [])
        own = [c for c in calls if c.round_index == index]
        ids = said.get("call_item_ids", {}) if said.get("reasoning") else {}
        items += [
            {
                "type": "function_call",
                **({"id": ids[c.tool_call_id]} if c.tool_call_id in ids else {}),
                "call_id": c.tool_call_id,
                "name": c.tool_name,
                "arguments": json.dumps(c.arguments),
            }
            for c in own
        ]
        items += [
            {
                "type": "function_call_output",
                "call_id": c.tool_call_id,
                "output": json.dumps(results[c.tool_call_id].result),
            }
            for c in own
        ]
    return items


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=rounds_of, secrets=st.lists(encrypted, min_size=1, max_size=3))
def test_every_reasoning_item_is_recorded_with_its_round_and_replayed_right_before_its_calls(
    trace: list[tuple[int, int]], secrets: list[str]
) -> None:
    model = scripted(trace, secrets)
    run = PublishedRun()
    asyncio.run(recorded_run(run, agent_of(model), "go", assistant_message_id="m", model=MODEL, run_config=NO_TRACING))

    # Each round with reasoning has its response published right before its calls, with exactly its items.
    reasoned = [index for index, (thoughts, _) in enumerate(trace) if thoughts > 0]
    assert [r["round_index"] for r in run.of("response")] == reasoned
    for at, (kind, value) in enumerate(run.events):
        if kind == "response":
            assert run.events[at + 1][0] == "call"
            assert run.events[at + 1][1].round_index == value["round_index"]
            assert [item["id"] for item in value["reasoning"]] == [
                f"rs_{value['round_index']}_{t}" for t in range(trace[value["round_index"]][0])
            ]
    # What the SDK sent back itself in the same turn is what was recorded.
    sent = [item for item in model.calls[-1].input if item.get("type") == "reasoning"]
    assert sent == [item for r in run.of("response") for item in r["reasoning"]]

    # Replayed into the next run: each fc_ id follows its round's reasoning, every secret intact.
    next_model = ScriptedModel([[assistant_message("ok")]])
    asyncio.run(
        Runner.run(
            agent_of(next_model),
            [*history_input(rendered(run)), {"role": "user", "content": "next"}],
            run_config=NO_TRACING,
        )
    )
    seen = next_model.calls[0].input
    assert [item for item in seen if item.get("type") == "reasoning"] == sent
    last_reasoning_round = -1
    for item in seen:
        if item.get("type") == "reasoning":
            last_reasoning_round = int(item["id"].split("_")[1])
        elif item.get("type") == "function_call" and "id" in item:
            number = int(item["call_id"].split("_")[1])
            assert item["id"] == f"fc_{number}"
            assert [c.round_index for c in run.of("call") if c.tool_call_id == item["call_id"]] == [
                last_reasoning_round
            ]
    with_ids = {item["call_id"] for item in seen if item.get("type") == "function_call" and "id" in item}
    assert with_ids == {c.tool_call_id for c in run.of("call") if trace[c.round_index][0] > 0}
