"""The OpenAI Agents SDK adapter against the running service: a two-turn conversation recorded through
``recorded_run``, replayed in the openai-responses format and handed to the next run.

No call here has an empty call id: the SDK refuses to run such a call (``ModelBehaviorError: Tool
invocations require a non-empty string call ID before execution.``), so a run of the SDK never has
one to record (tests/unit/test_openai_agents_adapter.py shows the refusal).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pydantic
import pytest
from agents import Agent, Model, RunConfig, TResponseInputItem, function_tool
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from toolhistory.openai_agents import DEFAULT_TOOL_ERROR_TEXT, history_input, recorded_run
from toolhistory.v1 import toolhistory_pb2 as pb

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from toolhistory.client import ToolHistoryClient
    from toolhistory.publisher import ToolEventPublisher

    from conftest import Replayed, Stack

pytestmark = pytest.mark.integration

NO_TRACING = RunConfig(tracing_disabled=True)
INPUT_ITEMS: pydantic.TypeAdapter[list[TResponseInputItem]] = pydantic.TypeAdapter(list[TResponseInputItem])


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"status": "shipped", "order": order_id}


@function_tool
def charge_card(amount: int) -> str:
    """Charge the card."""
    raise RuntimeError("card declined")


def agent_of(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="support", instructions="Help with orders.", model=model, tools=[lookup_order, charge_card])


def items_of(call: ModelCall, kind: str) -> list[dict[str, Any]]:
    return [item for item in call.input if isinstance(item, dict) and item.get("type") == kind]


async def test_a_recorded_run_is_replayed_into_the_next_run_with_its_calls_paired_and_its_error_marked(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    replayed_now: Replayed,
    ids: Callable[[str], str],
) -> None:
    conversation = ids("conv")

    def run_of(run_id: str, user_message_id: str) -> Any:
        return publisher.run(
            tenant_id=stack.tenant,
            conversation_id=conversation,
            channel="chat",
            run_id=run_id,
            user_message_id=user_message_id,
        )

    # Turn 1: two parallel calls in one model response (the card charge raises), then the answer.
    order_call, charge_call = ids("call_order"), ids("call_charge")
    first_model = ScriptedModel(
        [
            ModelStep(
                output=[
                    function_call("lookup_order", {"order_id": "A-1"}, call_id=order_call),
                    function_call("charge_card", {"amount": 30}, call_id=charge_call),
                ],
                usage=Usage(requests=1, input_tokens=120, output_tokens=30, total_tokens=150),
            ),
            ModelStep(
                output=[assistant_message("A-1 has shipped; the card was declined.")],
                usage=Usage(requests=1, input_tokens=200, output_tokens=20, total_tokens=220),
            ),
        ]
    )
    first = await recorded_run(
        run_of(ids("run"), "user-1"),
        agent_of(first_model),
        "Where is order A-1? Charge 30 for shipping.",
        assistant_message_id="assistant-1",
        model="gpt-test",
        run_config=NO_TRACING,
    )
    assert first.final_output == "A-1 has shipped; the card was declined."

    history = replayed_now(client, conversation, "openai-responses", until=lambda h: len(h.turns) == 1)
    [turn] = history.turns
    assert turn.assistant_message_id == "assistant-1"
    assert turn.after_message_id == "user-1"

    # Turn 2: the replayed items go to the SDK as input; the model sees the earlier calls and results,
    # then looks the order up again.
    recheck_call = ids("call_recheck")

    def recheck_after_history(call: ModelCall) -> Any:
        calls = {item["call_id"] for item in items_of(call, "function_call")}
        outputs = {item["call_id"] for item in items_of(call, "function_call_output")}
        assert calls == outputs == {order_call, charge_call}, f"the model saw {call.input!r}"
        return [function_call("lookup_order", {"order_id": "A-1"}, call_id=recheck_call)]

    second_model = ScriptedModel(
        [ModelStep.respond(recheck_after_history), [assistant_message("Still shipped; the charge had failed.")]]
    )
    replay_input = history_input(history)
    assert INPUT_ITEMS.validate_python(replay_input) == replay_input
    user_turn: TResponseInputItem = {"role": "user", "content": "What happened with my order?"}
    second = await recorded_run(
        run_of(ids("run"), "user-2"),
        agent_of(second_model),
        [*replay_input, user_turn],
        assistant_message_id="assistant-2",
        run_config=NO_TRACING,
    )
    second_model.assert_complete()

    seen = second_model.calls[0]
    calls = items_of(seen, "function_call")
    outputs = items_of(seen, "function_call_output")
    assert [(c["call_id"], c["name"]) for c in calls] == [(order_call, "lookup_order"), (charge_call, "charge_card")]
    assert [c["arguments"] for c in calls] in (
        ['{"order_id":"A-1"}', '{"amount":30}'],
        ['{"order_id": "A-1"}', '{"amount": 30}'],
    )
    by_call = {o["call_id"]: o["output"] for o in outputs}
    assert by_call[charge_call] == f"[error] {DEFAULT_TOOL_ERROR_TEXT}", "the error is marked"
    assert not by_call[order_call].startswith("[error]")
    assert json.loads(by_call[order_call]) == {"status": "shipped", "order": "A-1"}
    assert seen.input[-1] == user_turn
    assert second.final_output == "Still shipped; the charge had failed."

    # Both turns replay, in order, each before its own answer.
    both = replayed_now(client, conversation, "openai-responses", until=lambda h: len(h.turns) == 2)
    assert [t.assistant_message_id for t in both.turns] == ["assistant-1", "assistant-2"]
    assert [dict(item)["call_id"] for item in history_input(both.turns[1:])] == [recheck_call, recheck_call]


async def test_a_crashed_run_s_reasoning_goes_back_to_the_same_model_before_its_calls_when_the_turn_goes_on(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
) -> None:
    conversation = ids("conv")
    order_call = ids("call_order")
    reasoning_item = ResponseReasoningItem(
        id="rs_0a1f",
        type="reasoning",
        summary=[Summary(text="Look the order up first.", type="summary_text")],
        encrypted_content="gAAAAABo-opaque-state",
    )

    def run_of(run_id: str) -> Any:
        # A channel whose policy replays a crashed run's rounds that reached a later model call (per_service_call).
        return publisher.run(
            tenant_id=stack.tenant,
            conversation_id=conversation,
            channel="long-runs",
            run_id=run_id,
            user_message_id="user-1",
        )

    # Turn 1's run: a reasoning round, a second round, then the worker dies at the next model call (the run fails;
    # the turn goes on). The second round's results never reached the model: only the first round replays.
    first_model = ScriptedModel(
        [
            ModelStep(
                output=[
                    reasoning_item,
                    assistant_message("I'll look the order up."),
                    function_call("lookup_order", {"order_id": "A-1"}, call_id=order_call, item_id="fc_0a1f"),
                ],
                usage=Usage(requests=1, input_tokens=120, output_tokens=30, total_tokens=150),
            ),
            ModelStep(
                output=[function_call("lookup_order", {"order_id": "B-2"}, call_id=ids("call_b"), item_id="fc_0b2f")],
                usage=Usage(requests=1, input_tokens=160, output_tokens=20, total_tokens=180),
            ),
            ModelStep.raise_error(ConnectionError("the worker lost the provider")),
        ]
    )
    with pytest.raises(ConnectionError):
        await recorded_run(
            run_of(ids("run")),
            agent_of(first_model),
            "Where is order A-1?",
            assistant_message_id="assistant-1",
            model="o4-mini",
            run_config=NO_TRACING,
        )
    # What the SDK itself sent back in that turn: the replay must carry the same item.
    [sent_back] = items_of(first_model.calls[1], "reasoning")

    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses", model="o4-mini"
    )
    [turn] = history.turns
    assert turn.status == pb.RUN_STATUS_FAILED
    [round_] = turn.rounds
    assert (round_.provider, round_.model, round_.text) == ("openai", "o4-mini", "I'll look the order up.")
    assert round_.reasoning_omitted == pb.REASONING_OMISSION_UNSPECIFIED
    assert json.loads(round_.reasoning_json) == [sent_back]

    # The turn goes on in a new run: its first request carries the reasoning, then the call with its fc_ id.
    second_model = ScriptedModel([[assistant_message("A-1 has shipped.")]])
    user_turn: TResponseInputItem = {"role": "user", "content": "Where is order A-1?"}
    await recorded_run(
        run_of(ids("run")),
        agent_of(second_model),
        [user_turn, *history_input(history)],
        assistant_message_id="assistant-1",
        model="o4-mini",
        run_config=NO_TRACING,
    )
    seen = [item for item in second_model.calls[0].input if item.get("type") != "function_call_output"]
    assert seen[1:] == [
        sent_back,
        {"type": "message", "role": "assistant", "content": "I'll look the order up."},
        {
            "type": "function_call",
            "id": "fc_0a1f",
            "call_id": order_call,
            "name": "lookup_order",
            "arguments": seen[3]["arguments"],
        },
    ]
    assert json.dumps(seen[1]) == json.dumps(sent_back), "byte for byte, key order included"

    # Another model gets none of it, and no fc_ id without its reasoning item.
    other = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses", model="gpt-4.1"
    )
    assert other.turns[0].rounds[0].reasoning_omitted == pb.REASONING_OMISSION_OTHER_MODEL
    replayed = history_input(other)
    assert [item["type"] for item in replayed if item["type"] == "reasoning"] == []
    assert all("id" not in item for item in replayed if item["type"] == "function_call")


class OtherProvidersModel(Model):
    """Another provider's ``Model`` (as a LiteLLM or a custom model is): the SDK's ScriptedModel gives its items."""

    def __init__(self, scripted: ScriptedModel) -> None:
        self.scripted = scripted

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        return await self.scripted.get_response(*args, **kwargs)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        return self.scripted.stream_response(*args, **kwargs)


@pytest.mark.parametrize("provider", [None, "my-gateway"])
async def test_a_run_on_another_provider_s_model_records_no_reasoning_as_openai_s(
    stack: Stack,
    publisher: ToolEventPublisher,
    client: ToolHistoryClient,
    ids: Callable[[str], str],
    provider: str | None,
) -> None:
    conversation = ids("conv")
    order_call = ids("call_order")
    model = OtherProvidersModel(
        ScriptedModel(
            [
                ModelStep(
                    output=[
                        ResponseReasoningItem(
                            id="rs_other",
                            type="reasoning",
                            summary=[Summary(text="Look the order up first.", type="summary_text")],
                            encrypted_content="not-openai-state",
                        ),
                        assistant_message("I'll look the order up."),
                        function_call("lookup_order", {"order_id": "A-1"}, call_id=order_call, item_id="fc_other"),
                    ]
                ),
                # A second round: the first one's results reached the model, so the crashed run's first round replays.
                ModelStep(output=[function_call("lookup_order", {"order_id": "B-2"}, call_id=ids("call_b"))]),
                ModelStep.raise_error(ConnectionError("the worker lost the provider")),
            ]
        )
    )
    run = publisher.run(
        tenant_id=stack.tenant,
        conversation_id=conversation,
        channel="long-runs",
        run_id=ids("run"),
        user_message_id="user-1",
    )
    with pytest.raises(ConnectionError):
        await recorded_run(
            run,
            Agent(name="support", model=model, tools=[lookup_order]),
            "Where is order A-1?",
            assistant_message_id="assistant-1",
            model="claude-via-gateway",
            run_config=NO_TRACING,
            **({"provider": provider} if provider else {}),
        )

    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses", model="claude-via-gateway"
    )
    [round_] = history.turns[0].rounds
    # Unknown provider: nothing recorded beside the calls. Named: recorded through it, never replayed to OpenAI.
    assert round_.provider == (provider or "")
    assert round_.reasoning_json == ""
    if provider is not None:
        assert round_.reasoning_omitted == pb.REASONING_OMISSION_OTHER_PROVIDER
    replayed = history_input(history)
    assert [item["type"] for item in replayed if item["type"] == "reasoning"] == []
    assert all("id" not in item for item in replayed if item["type"] == "function_call")
