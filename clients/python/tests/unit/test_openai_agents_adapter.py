"""The OpenAI Agents SDK adapter: real runs of the SDK with its own ScriptedModel, recorded into a
RunPublisher double that keeps what it was asked to publish."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pydantic
import pytest
from agents import (
    Agent,
    MaxTurnsExceeded,
    ModelBehaviorError,
    RunConfig,
    RunHooks,
    Runner,
    RunState,
    Tool,
    TResponseInputItem,
    UserError,
    function_tool,
    set_tracing_disabled,
)
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolhistory.events import RunFailure, TokenUsage, ToolCall, ToolResult
from toolhistory.openai_agents import (
    DEFAULT_TOOL_ERROR_TEXT,
    STREAM_CANCELLED,
    AgentsRunRecorder,
    history_input,
    parse_tool_arguments,
    recorded_run,
    recorded_run_streamed,
    tool_error_function,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

# Nothing here may reach the network: no trace export.
set_tracing_disabled(True)
NO_TRACING = RunConfig(tracing_disabled=True)


@dataclass
class PublishedRun:
    """A RunPublisher double: what the recorder asked to publish, in order."""

    events: list[tuple[str, Any]] = field(default_factory=list)

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
    def end(self) -> tuple[str, dict[str, Any]]:
        kind, fields = self.events[-1]
        assert kind in ("complete", "fail"), f"the run did not end: {self.events}"
        return kind, fields


def usage(input_tokens: int, output_tokens: int) -> Usage:
    return Usage(
        requests=1, input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=input_tokens + output_tokens
    )


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"status": "shipped", "order": order_id}


@function_tool
def charge_card(amount: int) -> str:
    """Charge the card."""
    raise RuntimeError("card declined")


@function_tool(failure_error_function=tool_error_function(lambda ctx, error: f"charge failed: {error}"))
def charge_card_explained(amount: int) -> str:
    """Charge the card, telling the model why it failed."""
    raise RuntimeError("card declined")


@function_tool(failure_error_function=lambda ctx, error: f"charge failed: {error}")
def charge_card_unmarked(amount: int) -> str:
    """Charge the card with a failure text the recorder cannot tell from a result."""
    raise RuntimeError("card declined")


@function_tool(failure_error_function=None)
def charge_card_raising(amount: int) -> str:
    """Charge the card; its error ends the run."""
    raise RuntimeError("card declined")


@function_tool(needs_approval=True)
def refund(amount: int) -> str:
    """Refund an amount (a person approves it first)."""
    return f"refunded {amount}"


TOOLS: list[Tool] = [
    lookup_order,
    charge_card,
    charge_card_explained,
    charge_card_unmarked,
    charge_card_raising,
    refund,
]


def agent_of(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="support", model=model, tools=TOOLS)


def call(name: str, call_id: str, **arguments: Any) -> Any:
    return function_call(name, arguments, call_id=call_id)


def parallel_round_model() -> ScriptedModel:
    return ScriptedModel(
        [
            ModelStep(
                output=[call("lookup_order", "call_a", order_id="A-1"), call("charge_card", "call_b", amount=30)],
                usage=usage(10, 5),
                response_id="resp_1",
            ),
            ModelStep(
                output=[assistant_message("Shipped; the card was declined.", item_id="msg_1")], usage=usage(20, 7)
            ),
        ]
    )


async def test_records_a_round_of_parallel_calls_its_outputs_and_the_tokens_of_each_model_call() -> None:
    run = PublishedRun()
    result = await recorded_run(
        run, agent_of(parallel_round_model()), "where is A-1?", assistant_message_id="host-msg-2", run_config=NO_TRACING
    )

    assert result.final_output == "Shipped; the card was declined."
    assert run.of("call") == [
        ToolCall(0, 0, "call_a", "lookup_order", {"order_id": "A-1"}),
        ToolCall(0, 1, "call_b", "charge_card", {"amount": 30}),
    ]
    assert run.of("result") == [
        # JSON the tool returned stays JSON (the model was sent its str()); the SDK's error text is an error.
        ToolResult(0, 0, "call_a", {"status": "shipped", "order": "A-1"}, is_error=False, tool_name="lookup_order"),
        ToolResult(0, 1, "call_b", DEFAULT_TOOL_ERROR_TEXT, is_error=True, tool_name="charge_card"),
    ]
    assert run.end == (
        "complete",
        {
            "assistant_message_id": "host-msg-2",
            "finish_reason": "stop",
            "usage": [TokenUsage(10, 5, None), TokenUsage(20, 7, None)],
            "cited_sources": None,
        },
    )


@pytest.mark.parametrize(
    ("tool", "expected_text", "expected_error"),
    [
        ("charge_card", DEFAULT_TOOL_ERROR_TEXT, True),
        ("charge_card_explained", "charge failed: card declined", True),
        # A failure_error_function of the host's own sends text like any result: nothing tells it apart.
        ("charge_card_unmarked", "charge failed: card declined", False),
    ],
)
async def test_tells_a_tool_error_from_a_result_when_the_sdk_or_tool_error_function_made_the_text(
    tool: str, expected_text: str, expected_error: bool
) -> None:
    model = ScriptedModel([[call(tool, "call_x", amount=1)], [assistant_message("ok")]])
    run = PublishedRun()
    await recorded_run(run, agent_of(model), "charge", assistant_message_id="m", run_config=NO_TRACING)
    [result] = run.of("result")
    assert (result.result, result.is_error) == (expected_text, expected_error)


async def test_a_tool_error_formatter_of_the_host_still_marks_the_errors_it_formats() -> None:
    model = ScriptedModel([[call("charge_card", "call_x", amount=1)], [assistant_message("ok")]])
    run = PublishedRun()
    config = RunConfig(tracing_disabled=True, tool_error_formatter=lambda args: f"{args.tool_name} failed")
    await recorded_run(run, agent_of(model), "charge", assistant_message_id="m", run_config=config)
    [result] = run.of("result")
    assert (result.result, result.is_error) == ("charge_card failed", True)


async def test_numbers_rounds_by_the_model_calls_that_asked_for_tools_and_records_every_call_s_tokens() -> None:
    model = ScriptedModel(
        [
            ModelStep(output=[call("lookup_order", "c1", order_id="A")], usage=usage(1, 1)),
            ModelStep(
                output=[call("lookup_order", "c2", order_id="B"), call("lookup_order", "c3", order_id="C")],
                usage=usage(2, 2),
            ),
            ModelStep(output=[assistant_message("done")], usage=usage(3, 3)),
        ]
    )
    run = PublishedRun()
    await recorded_run(run, agent_of(model), "go", assistant_message_id="m", run_config=NO_TRACING, model="gpt-test")
    assert [(c.round_index, c.sequence_index, c.tool_call_id) for c in run.of("call")] == [
        (0, 0, "c1"),
        (1, 0, "c2"),
        (1, 1, "c3"),
    ]
    assert run.end[1]["usage"] == [
        TokenUsage(1, 1, "gpt-test"),
        TokenUsage(2, 2, "gpt-test"),
        TokenUsage(3, 3, "gpt-test"),
    ]


async def test_a_run_that_stops_for_approval_records_the_request_and_ends_awaiting_approval() -> None:
    model = ScriptedModel(
        [
            ModelStep(
                output=[
                    call("lookup_order", "c1", order_id="A"),
                    call("refund", "c2", amount=3),
                    call("refund", "c3", amount=4),
                ],
                usage=usage(10, 5),
            ),
            ModelStep(output=[call("lookup_order", "c4", order_id="B")], usage=usage(30, 3)),
            ModelStep(output=[assistant_message("refunded 3, not 4", item_id="msg_9")], usage=usage(40, 9)),
        ]
    )
    agent = agent_of(model)
    first = PublishedRun()
    stopped = await recorded_run(first, agent, "refund", assistant_message_id="host-1", run_config=NO_TRACING)

    assert [c.tool_call_id for c in first.of("call")] == ["c1", "c2", "c3"]
    assert [r.tool_call_id for r in first.of("result")] == ["c1"]
    assert first.of("approval_requested") == [
        {"round_index": 0, "sequence_index": 1, "tool_call_id": "c2", "reason": None},
        {"round_index": 0, "sequence_index": 2, "tool_call_id": "c3", "reason": None},
    ]
    assert first.end == (
        "complete",
        {
            "assistant_message_id": "host-1",
            "finish_reason": "awaiting_approval",
            "usage": [TokenUsage(10, 5)],
            "cited_sources": None,
        },
    )

    # The host keeps the state while a person decides (here through its JSON), then resumes it as a new run.
    state = await RunState.from_json(agent, stopped.to_state().to_json())
    c2, c3 = state.get_interruptions()
    state.approve(c2)
    state.reject(c3, rejection_message="refunds over 3 need a manager")
    second = PublishedRun()
    resumed = await recorded_run(
        second, agent, state, assistant_message_id="host-2", decided_by="agent-7", run_config=NO_TRACING
    )

    assert resumed.final_output == "refunded 3, not 4"
    assert second.of("approval_decided") == [
        {
            "round_index": 0,
            "sequence_index": 1,
            "tool_call_id": "c2",
            "approved": True,
            "reason": None,
            "decided_by": "agent-7",
        },
        {
            "round_index": 0,
            "sequence_index": 2,
            "tool_call_id": "c3",
            "approved": False,
            "reason": "refunds over 3 need a manager",
            "decided_by": "agent-7",
        },
    ]
    # The approved call's output keeps the round and sequence of the run that asked; the rejected call did not run.
    # The resumed run's own round goes on with the numbering of the state.
    assert second.of("result") == [
        ToolResult(0, 1, "c2", "refunded 3", tool_name="refund"),
        ToolResult(1, 0, "c4", {"status": "shipped", "order": "B"}, tool_name="lookup_order"),
    ]
    assert second.of("call") == [ToolCall(1, 0, "c4", "lookup_order", {"order_id": "B"})]
    assert second.of("approval_requested") == []
    assert second.end == (
        "complete",
        {
            "assistant_message_id": "host-2",
            "finish_reason": "stop",
            "usage": [TokenUsage(30, 3), TokenUsage(40, 9)],
            "cited_sources": None,
        },
    )


async def test_a_model_error_fails_the_run_with_the_rounds_it_got_through_and_is_raised_again() -> None:
    model = ScriptedModel(
        [
            ModelStep(output=[call("lookup_order", "c1", order_id="A")], usage=usage(4, 2)),
            ConnectionError("provider unavailable"),
        ]
    )
    run = PublishedRun()
    seen: list[str] = []

    class HostHooks(RunHooks[Any]):
        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
            seen.append(str(result))

    with pytest.raises(ConnectionError, match="provider unavailable"):
        await recorded_run(
            run, agent_of(model), "go", assistant_message_id="m", run_config=NO_TRACING, hooks=HostHooks()
        )

    assert seen == [str({"status": "shipped", "order": "A"})], "the host's own hooks still run"
    assert run.of("call") == [ToolCall(0, 0, "c1", "lookup_order", {"order_id": "A"})]
    assert run.of("result") == [ToolResult(0, 0, "c1", {"status": "shipped", "order": "A"}, tool_name="lookup_order")]
    assert run.end == (
        "fail",
        {"error": RunFailure("ConnectionError", "provider unavailable"), "usage": [TokenUsage(4, 2)]},
    )


async def test_an_sdk_error_fails_the_run_from_the_state_it_carries_and_the_outputs_the_hooks_saw() -> None:
    model = ScriptedModel(
        [[call("lookup_order", "c1", order_id="A"), call("charge_card_raising", "c2", amount=5)]],
    )
    lookup_ended = threading.Event()

    class HostHooks(RunHooks[Any]):
        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: object) -> None:
            lookup_ended.set()

    # The SDK runs the round's calls at once and cancels the calls not yet answered when one raises; this test is
    # about a call answered first, so the charge raises once the lookup's hooks have run.
    @function_tool(name_override="charge_card_raising", failure_error_function=None)
    def charge_card_raising_after_the_lookup(amount: int) -> str:
        """Charge the card; its error ends the run."""
        if not lookup_ended.wait(timeout=10):
            raise AssertionError("the lookup's on_tool_end did not run within 10 s")
        raise RuntimeError("card declined")

    agent = Agent(name="support", model=model, tools=[lookup_order, charge_card_raising_after_the_lookup])
    run = PublishedRun()
    with pytest.raises(UserError):
        await recorded_run(run, agent, "go", assistant_message_id="m", run_config=NO_TRACING, hooks=HostHooks())
    assert [c.tool_call_id for c in run.of("call")] == ["c1", "c2"]
    # The parallel call ran (its side effects happened) although the SDK's error state lacks its output.
    assert [r.tool_call_id for r in run.of("result")] == ["c1"]
    kind, fields = run.end
    assert (kind, fields["error"].code) == ("fail", "UserError")


async def test_a_run_the_host_cancels_in_a_tool_fails_aborted_and_leaves_the_call_without_a_result() -> None:
    model = ScriptedModel([[call("charge_card", "c1", amount=5)]])
    charging = asyncio.Event()

    @function_tool(name_override="charge_card")
    async def charge_card_slowly(amount: int) -> str:
        """Charge the card (and wait on the payment provider)."""
        charging.set()
        await asyncio.Event().wait()
        return "charged"

    run = PublishedRun()
    agent = Agent(name="support", model=model, tools=[charge_card_slowly])
    turn = asyncio.create_task(recorded_run(run, agent, "go", assistant_message_id="m", run_config=NO_TRACING))
    await charging.wait()
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    assert [c.tool_call_id for c in run.of("call")] == ["c1"]
    assert run.of("result") == []
    assert run.end == (
        "fail",
        {"error": RunFailure("aborted", "the run was cancelled before it completed"), "usage": [TokenUsage(0, 0)]},
    )


async def test_max_turns_fails_the_run_with_every_round_and_the_tokens_of_every_call() -> None:
    model = ScriptedModel(
        [ModelStep(output=[call("lookup_order", f"c{n}", order_id="A")], usage=usage(n, 1)) for n in range(3)]
    )
    run = PublishedRun()
    with pytest.raises(MaxTurnsExceeded):
        await recorded_run(run, agent_of(model), "loop", assistant_message_id="m", run_config=NO_TRACING, max_turns=2)
    assert [(c.round_index, c.tool_call_id) for c in run.of("call")] == [(0, "c0"), (1, "c1")]
    assert run.end[1]["usage"] == [TokenUsage(0, 1), TokenUsage(1, 1)]
    assert run.end[1]["error"].code == "MaxTurnsExceeded"


async def test_a_streamed_run_is_recorded_like_a_run_once_its_events_are_exhausted() -> None:
    plain, streamed = PublishedRun(), PublishedRun()
    await recorded_run(plain, agent_of(parallel_round_model()), "go", assistant_message_id="m", run_config=NO_TRACING)
    stream = recorded_run_streamed(
        streamed, agent_of(parallel_round_model()), "go", assistant_message_id="m", run_config=NO_TRACING
    )
    events = [event async for event in stream.stream_events()]
    assert events, "the events pass through"
    assert stream.result.final_output == "Shipped; the card was declined."
    assert streamed.events == plain.events


async def test_a_streamed_run_whose_consumer_stops_early_is_cancelled_and_failed() -> None:
    run = PublishedRun()
    stream = recorded_run_streamed(
        run, agent_of(parallel_round_model()), "go", assistant_message_id="m", run_config=NO_TRACING
    )
    events = stream.stream_events()
    await events.__anext__()
    await events.aclose()
    assert run.end == ("fail", {"error": STREAM_CANCELLED, "usage": None})


def search_then_answer(answer: str) -> ScriptedModel:
    return ScriptedModel(
        [
            ModelStep(output=[call("lookup_order", "c1", order_id="A")], usage=usage(4, 2)),
            ModelStep(output=[assistant_message(answer, item_id="msg_1")], usage=usage(8, 3)),
        ]
    )


@pytest.mark.parametrize(
    ("option", "answer", "expected"),
    [
        ({"cited_sources_from_answer": True}, "Shipped [source4], says the carrier [source2].", [2, 4]),
        ({"cited_sources_from_answer": True}, "Shipped.", []),
        ({"cited_sources_from_answer": False}, "Shipped [source4].", None),
        ({}, "Shipped [source4].", None),
    ],
    ids=["on: the numbers the final output cites", "on: no citation is []", "off: left out", "by default: left out"],
)
async def test_reads_the_cited_sources_of_the_final_output_when_asked(
    option: dict[str, Any], answer: str, expected: list[int] | None
) -> None:
    run = PublishedRun()
    agent = agent_of(search_then_answer(answer))
    await recorded_run(run, agent, "A?", assistant_message_id="m", run_config=NO_TRACING, **option)
    kind, fields = run.end
    assert (kind, fields["finish_reason"], fields["cited_sources"]) == ("complete", "stop", expected)


async def test_reads_a_structured_final_output_as_its_json_text_and_a_streamed_run_s_once_it_ends() -> None:
    class Answer(pydantic.BaseModel):
        text: str

    structured = PublishedRun()
    model = search_then_answer(json.dumps({"text": "Shipped [source3], on time [source1]."}))
    agent = Agent(name="support", model=model, tools=TOOLS, output_type=Answer)
    result = await recorded_run(
        structured, agent, "A?", assistant_message_id="m", run_config=NO_TRACING, cited_sources_from_answer=True
    )
    assert result.final_output == Answer(text="Shipped [source3], on time [source1].")
    assert structured.end[1]["cited_sources"] == [1, 3]

    streamed = PublishedRun()
    stream = recorded_run_streamed(
        streamed,
        agent_of(search_then_answer("Shipped [source5].")),
        "A?",
        assistant_message_id="m",
        run_config=NO_TRACING,
        cited_sources_from_answer=True,
    )
    _ = [event async for event in stream.stream_events()]
    assert streamed.end[1]["cited_sources"] == [5]


async def test_a_run_without_the_model_s_answer_or_a_failed_one_carries_no_cited_sources() -> None:
    # Stopped for approval: a later run's answer may cite this run's results.
    asked = PublishedRun()
    asking = ScriptedModel([ModelStep(output=[call("refund", "c1", amount=3)], usage=usage(4, 2))])
    await recorded_run(
        asked,
        agent_of(asking),
        "refund",
        assistant_message_id="m",
        run_config=NO_TRACING,
        cited_sources_from_answer=True,
    )
    assert (asked.end[1]["finish_reason"], asked.end[1]["cited_sources"]) == ("awaiting_approval", None)

    # The final output is a tool's.
    tool_output = PublishedRun()
    once = ScriptedModel([ModelStep(output=[call("lookup_order", "c1", order_id="A")], usage=usage(4, 2))])
    agent = Agent(name="support", model=once, tools=TOOLS, tool_use_behavior="stop_on_first_tool")
    await recorded_run(
        tool_output, agent, "A?", assistant_message_id="m", run_config=NO_TRACING, cited_sources_from_answer=True
    )
    assert (tool_output.end[1]["finish_reason"], tool_output.end[1]["cited_sources"]) == ("tool_limit", None)

    failed = PublishedRun()
    with pytest.raises(ConnectionError):
        await recorded_run(
            failed,
            agent_of(ScriptedModel([ConnectionError("provider unavailable")])),
            "A?",
            assistant_message_id="m",
            run_config=NO_TRACING,
            cited_sources_from_answer=True,
        )
    assert failed.end[0] == "fail"
    assert "cited_sources" not in failed.end[1]


async def test_a_publishing_error_does_not_hide_the_run_s_own_error() -> None:
    class BrokenRun(PublishedRun):
        def fail(self, **fields: Any) -> object:
            raise OSError("broker down")

    model = ScriptedModel([ConnectionError("provider unavailable")])
    with pytest.raises(ConnectionError):
        await recorded_run(BrokenRun(), agent_of(model), "go", assistant_message_id="m", run_config=NO_TRACING)


async def test_the_sdk_refuses_a_call_without_a_call_id_so_a_run_never_records_an_empty_one() -> None:
    model = ScriptedModel([[call("lookup_order", "", order_id="A")]])
    run = PublishedRun()
    with pytest.raises(ModelBehaviorError, match="non-empty string call ID"):
        await recorded_run(run, agent_of(model), "go", assistant_message_id="m", run_config=NO_TRACING)
    assert run.of("call") == []
    assert run.end[0] == "fail"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("  ", {}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        ("{not json", {"_raw": "{not json"}),
        ('"text"', {"_raw": '"text"'}),
    ],
)
def test_parses_arguments_keeping_what_is_not_a_json_object_as_raw_text(text: str, expected: object) -> None:
    assert parse_tool_arguments(text) == expected


def test_a_recorder_ends_a_run_once() -> None:
    run = PublishedRun()
    recorder = AgentsRunRecorder(run, assistant_message_id="m")
    asyncio.run(recorder.fail(ValueError("first")))
    asyncio.run(recorder.fail(ValueError("second")))
    assert run.of("fail") == [{"error": RunFailure("ValueError", "first"), "usage": None}]


# ----------------------------------------------------------------------------------------------
# Replay
# ----------------------------------------------------------------------------------------------

INPUT_ITEMS: pydantic.TypeAdapter[list[TResponseInputItem]] = pydantic.TypeAdapter(list[TResponseInputItem])

REPLAYED_TURN = [
    {"type": "function_call", "call_id": "call_order", "name": "lookup_order", "arguments": '{"order_id":"A-1"}'},
    {"type": "function_call", "call_id": "call_charge", "name": "charge_card", "arguments": '{"amount":30}'},
    {"type": "function_call_output", "call_id": "call_order", "output": '{"status":"shipped"}'},
    {"type": "function_call_output", "call_id": "call_charge", "output": "[error] card declined"},
]


@dataclass(frozen=True)
class Turn:
    """What history_input reads of a replayed turn (its provider messages)."""

    messages: list[Any]


@dataclass(frozen=True)
class History:
    turns: list[Turn]
    format: str = "openai-responses"


def test_history_input_refuses_a_history_of_another_format() -> None:
    with pytest.raises(ValueError, match="not 'openai'"):
        history_input(History([], format="openai"))


def test_history_input_gives_items_the_sdk_s_own_input_type_accepts() -> None:
    items = history_input(History([Turn(REPLAYED_TURN), Turn(REPLAYED_TURN[:1] + REPLAYED_TURN[2:3])]))
    assert INPUT_ITEMS.validate_python(items) == items
    assert [item["type"] for item in items] == ["function_call"] * 2 + ["function_call_output"] * 2 + [
        "function_call",
        "function_call_output",
    ]
    assert all("id" not in item for item in items)


@pytest.mark.parametrize(
    "item",
    [
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
        {"type": "function_call", "call_id": "c1", "name": "x"},
        "text",
    ],
)
def test_history_input_refuses_items_of_another_format_naming_the_one_to_ask_for(item: object) -> None:
    with pytest.raises(TypeError, match='format="openai-responses"'):
        history_input([item])


async def test_a_replayed_history_reaches_the_model_of_the_next_run_with_every_call_paired() -> None:
    model = ScriptedModel([[assistant_message("A-1 shipped earlier")]])
    user: TResponseInputItem = {"role": "user", "content": "and now?"}
    await Runner.run(agent_of(model), [*history_input(REPLAYED_TURN), user], run_config=NO_TRACING)
    seen = model.calls[0].input
    assert seen[: len(REPLAYED_TURN)] == REPLAYED_TURN
    assert seen[-1] == user


# Traces of model responses: each a number of parallel calls (0: an answer without tools);
# the last response is always the final answer.
traces = st.lists(st.integers(min_value=0, max_value=4), min_size=0, max_size=5)
failing = st.sets(st.integers(min_value=0, max_value=20))


def scripted_trace(trace: list[int], failing_calls: set[int]) -> tuple[ScriptedModel, list[list[str]]]:
    steps: list[Any] = []
    rounds: list[list[str]] = []
    number = 0
    for calls in trace:
        if calls == 0:
            # A response without function calls is no round (the SDK ends the run on it, so it ends the script too).
            continue
        ids = []
        output = []
        for _ in range(calls):
            call_id = f"call_{number}"
            tool = "charge_card" if number in failing_calls else "lookup_order"
            output.append(
                call(tool, call_id, **({"amount": number} if tool == "charge_card" else {"order_id": str(number)}))
            )
            ids.append(call_id)
            number += 1
        steps.append(ModelStep(output=output, usage=usage(len(steps) + 1, calls)))
        rounds.append(ids)
    steps.append(ModelStep(output=[assistant_message("done")], usage=usage(len(steps) + 1, 1)))
    return ScriptedModel(steps), rounds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=traces, failing_calls=failing)
def test_rounds_and_sequences_follow_the_model_responses_and_replay_pairs_every_call(
    trace: list[int], failing_calls: set[int]
) -> None:
    model, rounds = scripted_trace(trace, failing_calls)
    run = PublishedRun()
    asyncio.run(recorded_run(run, agent_of(model), "go", assistant_message_id="m", run_config=NO_TRACING, max_turns=20))

    calls, results = run.of("call"), run.of("result")
    assert [[c.tool_call_id for c in calls if c.round_index == r] for r in range(len(rounds))] == rounds
    assert all(c.sequence_index == rounds[c.round_index].index(c.tool_call_id) for c in calls)
    assert [(r.round_index, r.sequence_index, r.tool_call_id) for r in results] == [
        (c.round_index, c.sequence_index, c.tool_call_id) for c in calls
    ]
    assert all(r.is_error == (r.tool_name == "charge_card") for r in results)
    assert len(run.end[1]["usage"]) == len(rounds) + 1

    # The service's openai-responses rendering of what was recorded, replayed into the next run.
    replayed: list[dict[str, Any]] = []
    for index in range(len(rounds)):
        own = [c for c in calls if c.round_index == index]
        replayed += [
            {
                "type": "function_call",
                "call_id": c.tool_call_id,
                "name": c.tool_name,
                "arguments": json.dumps(c.arguments),
            }
            for c in own
        ]
        for c in own:
            [r] = [r for r in results if r.tool_call_id == c.tool_call_id]
            text = r.result if isinstance(r.result, str) else json.dumps(r.result)
            replayed.append(
                {
                    "type": "function_call_output",
                    "call_id": c.tool_call_id,
                    "output": ("[error] " if r.is_error else "") + text,
                }
            )
    next_model = ScriptedModel([[assistant_message("ok")]])
    asyncio.run(
        Runner.run(
            agent_of(next_model), [*history_input(replayed), {"role": "user", "content": "next"}], run_config=NO_TRACING
        )
    )
    seen = next_model.calls[0].input
    call_ids = [item["call_id"] for item in seen if item.get("type") == "function_call"]
    output_ids = [item["call_id"] for item in seen if item.get("type") == "function_call_output"]
    assert call_ids == output_ids == [c.tool_call_id for c in calls]
    errors = {
        item["call_id"]
        for item in seen
        if item.get("type") == "function_call_output" and item["output"].startswith("[error] ")
    }
    assert errors == {r.tool_call_id for r in results if r.is_error}
