"""The PydanticAI adapter's mapping, with real agents and PydanticAI's FunctionModel."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRetry,
    ToolDenied,
    ToolFailed,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from toolhistory.pydantic_ai import (
    REPLAY_FORMAT,
    RecordedResult,
    RecordedUsage,
    arguments_of,
    from_replay_messages,
    result_of,
    run_failure_of,
    run_record,
    to_message_history,
)


def _first_turn_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """One response of four parallel calls (an empty id among them), then the answer."""
    if isinstance(messages[-1], ModelRequest) and any(isinstance(p, UserPromptPart) for p in messages[-1].parts):
        return ModelResponse(
            parts=[
                TextPart("Looking it up."),
                ToolCallPart("lookup_order", {"order_id": "A-1"}, tool_call_id="call_order"),
                ToolCallPart("charge_card", '{"amount": 30}', tool_call_id="call_charge"),
                ToolCallPart("lookup_order", {"order_id": "B-2"}, tool_call_id=""),
                ToolCallPart("refund", {"amount": 5}, tool_call_id="call_refund"),
            ],
            usage=RequestUsage(input_tokens=120, output_tokens=40),
        )
    return ModelResponse(parts=[TextPart("Order A-1 shipped.")], usage=RequestUsage(input_tokens=300, output_tokens=12))


def _agent() -> Agent[None, str]:
    agent = Agent(FunctionModel(_first_turn_model))

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        return {"status": "shipped", "order_id": order_id}

    @agent.tool_plain
    def charge_card(amount: int) -> str:
        raise ModelRetry(f"card declined for {amount}")

    @agent.tool_plain
    def refund(amount: int) -> str:
        raise ToolFailed("refunds are closed")

    return agent


async def test_a_run_is_recorded_as_rounds_of_its_parallel_calls_with_errors_and_usage() -> None:
    result = await _agent().run("Where is my order?")
    record = run_record(result.new_messages())

    assert len(record.rounds) == 1
    (round_,) = record.rounds
    assert [(c.sequence_index, c.tool_call_id, c.tool_name, c.arguments) for c in round_.calls] == [
        (0, "call_order", "lookup_order", {"order_id": "A-1"}),
        (1, "call_charge", "charge_card", {"amount": 30}),
        (2, "", "lookup_order", {"order_id": "B-2"}),
        (3, "call_refund", "refund", {"amount": 5}),
    ]
    by_sequence = {r.sequence_index: r for r in round_.results}
    assert by_sequence == {
        0: RecordedResult(0, 0, "call_order", "lookup_order", {"status": "shipped", "order_id": "A-1"}, False),
        1: RecordedResult(0, 1, "call_charge", "charge_card", "card declined for 30", True),
        2: RecordedResult(0, 2, "", "lookup_order", {"status": "shipped", "order_id": "B-2"}, False),
        3: RecordedResult(0, 3, "call_refund", "refund", "refunds are closed", True),
    }
    model = "function:_first_turn_model:"
    assert record.usage == (RecordedUsage(120, 40, model), RecordedUsage(300, 12, model))
    assert record.finish_reason == "stop"
    assert record.decisions == ()
    assert record.resumed_results == ()


async def test_calls_waiting_for_approval_are_requested_and_the_resumed_run_records_the_decisions() -> None:
    agent = Agent(FunctionModel(_first_turn_model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, Any]:
        return {"status": "shipped"}

    @agent.tool_plain(requires_approval=True)
    def charge_card(amount: int) -> str:
        return f"charged {amount}"

    @agent.tool_plain(requires_approval=True)
    def refund(amount: int) -> str:
        return f"refunded {amount}"

    first = await agent.run("Charge and refund")
    assert isinstance(first.output, DeferredToolRequests)
    asked = run_record(first.new_messages(), deferred_requests=first.output)
    assert asked.awaiting
    assert asked.finish_reason == "tool_limit"
    assert [(c.tool_call_id, c.sequence_index) for c in asked.rounds[0].approval_requests] == [
        ("call_charge", 1),
        ("call_refund", 3),
    ]
    # The calls that ran in the paused round keep their results.
    assert {r.tool_call_id for r in asked.rounds[0].results} == {"call_order", ""}

    answers = DeferredToolResults(approvals={"call_charge": True, "call_refund": ToolDenied("already refunded")})
    resumed = await agent.run(message_history=first.all_messages(), deferred_tool_results=answers)
    record = run_record(resumed.new_messages(), history=first.all_messages(), deferred_results=answers)

    assert [(d.tool_call_id, d.round_index, d.sequence_index, d.approved, d.reason) for d in record.decisions] == [
        ("call_charge", 0, 1, True, None),
        ("call_refund", 0, 3, False, "already refunded"),
    ]
    # Only the approved call ran: its result carries the keys of the run that asked.
    assert record.resumed_results == (RecordedResult(0, 1, "call_charge", "charge_card", "charged 30", False),)
    assert record.rounds == ()
    assert record.finish_reason == "stop"


def test_a_decision_keys_the_call_by_its_place_in_the_run_that_asked_even_without_run_ids() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("first")]),
        ModelResponse(parts=[ToolCallPart("lookup", {}, tool_call_id="call_x")]),
        ModelRequest(parts=[ToolReturnPart("lookup", "found", tool_call_id="call_x")]),
        ModelResponse(parts=[TextPart("answer")]),
        ModelRequest(parts=[UserPromptPart("second")]),
        ModelResponse(parts=[TextPart("thinking aloud")]),
        ModelResponse(parts=[ToolCallPart("lookup", {}, tool_call_id="call_a"), ToolCallPart("pay", {}, "call_b")]),
    ]
    resumed: list[ModelMessage] = [
        ModelRequest(parts=[ToolReturnPart("pay", "paid", tool_call_id="call_b")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    answers = DeferredToolResults(approvals={"call_b": True, "call_unknown": False})
    record = run_record(resumed, history=history, deferred_results=answers)

    assert [(d.tool_call_id, d.round_index, d.sequence_index, d.approved) for d in record.decisions] == [
        ("call_b", 0, 1, True)
    ]
    assert record.resumed_results == (RecordedResult(0, 1, "call_b", "pay", "paid", False),)


def test_returns_of_calls_the_run_was_given_no_answer_for_are_not_its_own() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("first")]),
        ModelResponse(parts=[ToolCallPart("lookup", {}, tool_call_id="call_x")]),
    ]
    messages: list[ModelMessage] = [
        ModelRequest(parts=[ToolReturnPart("lookup", "found", tool_call_id="call_x"), UserPromptPart("next")]),
        ModelResponse(parts=[TextPart("done")]),
    ]
    record = run_record(messages, history=history)
    assert record.resumed_results == ()
    assert record.rounds == ()


async def test_output_tool_calls_are_the_answer_not_tool_use() -> None:
    class Answer(BaseModel):
        text: str

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (output_tool,) = info.output_tools
        return ModelResponse(parts=[ToolCallPart(output_tool.name, {"text": "done"}, tool_call_id="call_out")])

    result = await Agent(FunctionModel(model), output_type=Answer).run("hi")
    record = run_record(result.new_messages())
    assert record.rounds == ()
    assert record.finish_reason == "stop"
    assert len(record.usage) == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"a": 1}, {"a": 1}),
        ('{"a": [1, 2]}', {"a": [1, 2]}),
        ("", {}),
        (None, {}),
        ("   ", {}),
        ("not json", {"_raw": "not json"}),
        ("[1, 2]", {"_raw": "[1, 2]"}),
        ('"text"', {"_raw": '"text"'}),
        ("{" * 70 + "}" * 70, {"_raw": "{" * 70 + "}" * 70}),
    ],
)
def test_arguments_are_a_json_object_or_kept_as_raw_text(args: Any, expected: dict[str, Any]) -> None:
    assert arguments_of(ToolCallPart("t", args, tool_call_id="c")) == expected


class _Point(BaseModel):
    x: int
    label: str


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (ToolReturnPart("t", "plain text", tool_call_id="c"), "plain text"),
        (ToolReturnPart("t", {"a": [1, None]}, tool_call_id="c"), {"a": [1, None]}),
        (ToolReturnPart("t", _Point(x=1, label="p"), tool_call_id="c"), {"x": 1, "label": "p"}),
        (ToolReturnPart("t", 42, tool_call_id="c"), 42),
        (ToolReturnPart("t", None, tool_call_id="c"), ""),
        (ToolReturnPart("t", "boom", tool_call_id="c", outcome="failed"), "boom"),
        (ToolReturnPart("t", {"why": "bad"}, tool_call_id="c", outcome="failed"), '{"why":"bad"}'),
    ],
)
def test_a_result_is_recorded_as_the_model_was_sent_it(part: ToolReturnPart, expected: Any) -> None:
    assert result_of(part) == expected


def test_a_failure_is_recorded_with_its_class_and_text() -> None:
    assert run_failure_of(ValueError("bad input")) == ("ValueError", "bad input")
    assert run_failure_of(RuntimeError()) == ("RuntimeError", "RuntimeError")


def test_usage_is_bounded_to_the_contracts_thousand_entries() -> None:
    responses: list[ModelMessage] = [
        ModelResponse(parts=[TextPart("x")], usage=RequestUsage(input_tokens=1, output_tokens=2), model_name="m")
        for _ in range(1_005)
    ]
    usage = run_record(responses).usage
    assert len(usage) == 1_000
    assert usage[-1] == RecordedUsage(6, 12, "m")


# --- Replay ---------------------------------------------------------------------------------------


def _service_id(tool_call_id: str, place: str) -> str:
    """An id as the bedrock-converse format gives it: kept when valid, else a stable derived one."""
    valid = tool_call_id != "" and len(tool_call_id) <= 64 and all(c.isalnum() or c in "_-" for c in tool_call_id)
    return tool_call_id if valid else "tooluse_" + hashlib.sha256(f"{place}:{tool_call_id}".encode()).hexdigest()[:26]


def _bedrock_messages(rounds: list[list[tuple[str, str, dict[str, Any], Any, bool]]]) -> list[dict[str, Any]]:
    """A tool segment as the service sends it in the bedrock-converse format (see docs/grpc-api.md)."""
    messages: list[dict[str, Any]] = []
    for round_index, calls in enumerate(rounds):
        ids = [_service_id(call_id, f"{round_index}.{seq}") for seq, (call_id, *_rest) in enumerate(calls)]
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": i, "name": name, "input": args}}
                    for i, (_, name, args, _, _) in zip(ids, calls, strict=True)
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": i,
                            "content": [{"text": result} if isinstance(result, str) or error else {"json": result}],
                            "status": "error" if error else "success",
                        }
                    }
                    for i, (_, _, _, result, error) in zip(ids, calls, strict=True)
                ],
            }
        )
    return messages


@dataclass
class _Turn:
    messages: list[Any]
    run_id: str = "r1"
    assistant_message_id: str = "a-1"
    after_message_id: str = ""


@dataclass
class _History:
    turns: list[_Turn]
    format: str = REPLAY_FORMAT
    pending_approvals: list[Any] = field(default_factory=list)


SEGMENT = _bedrock_messages(
    [
        [
            ("call_order", "lookup_order", {"order_id": "A-1"}, {"status": "shipped"}, False),
            ("call.charge", "charge_card", {"amount": 30}, "card declined", True),
            ("", "lookup_order", {"order_id": "B-2"}, "not found", False),
        ],
        [("call_2", "notify", {}, None, False)],
    ]
)


def test_a_replayed_segment_becomes_paired_calls_and_returns_that_pydantic_ai_accepts() -> None:
    messages = to_message_history(_History([_Turn(SEGMENT)]))  # type: ignore[arg-type]

    assert [type(m) for m in messages] == [ModelResponse, ModelRequest, ModelResponse, ModelRequest]
    calls = [p for p in messages[0].parts if isinstance(p, ToolCallPart)]
    returns = [p for p in messages[1].parts if isinstance(p, ToolReturnPart)]
    assert [c.tool_call_id for c in calls] == [r.tool_call_id for r in returns]
    assert [c.tool_name for c in calls] == [r.tool_name for r in returns]
    assert calls[1].tool_call_id.startswith("tooluse_")
    assert [r.outcome for r in returns] == ["success", "failed", "success"]
    # A JSON result is sent as the same compact JSON text PydanticAI sent it the first time.
    assert returns[0].model_response_str() == '{"status":"shipped"}'
    assert returns[1].model_response_str() == '{"error":"card declined"}'
    assert returns[1].model_response_str(wrap_if_error=False) == "card declined"
    assert ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages)) == messages


async def test_an_agent_takes_the_replayed_history_and_its_model_sees_it() -> None:
    seen: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        return ModelResponse(parts=[TextPart("ok")])

    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("first question")])]
    history += to_message_history([_Turn(SEGMENT)])  # type: ignore[list-item]
    history.append(ModelResponse(parts=[TextPart("first answer")]))
    result = await Agent(FunctionModel(model)).run("second question", message_history=history)

    assert result.output == "ok"
    (sent,) = seen
    calls = [p for m in sent if isinstance(m, ModelResponse) for p in m.parts if isinstance(p, ToolCallPart)]
    returns = [p for m in sent if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    assert len(calls) == 4
    assert {c.tool_call_id: c.tool_name for c in calls} == {r.tool_call_id: r.tool_name for r in returns}
    assert [r.outcome for r in returns].count("failed") == 1


@pytest.mark.parametrize(
    ("messages", "complaint"),
    [
        ([{"role": "system", "content": []}], "role 'system'"),
        ([{"role": "assistant", "content": "text"}], "no content list"),
        # A round's text and reasoning come before its calls; any other block is none of a replay's.
        ([{"role": "assistant", "content": [{"text": "hi"}, {"image": {"format": "png"}}]}], "without 'toolUse'"),
        (
            [{"role": "user", "content": [{"toolResult": {"toolUseId": "x", "content": [{"text": "r"}]}}]}],
            "answers no replayed call",
        ),
        (
            [
                {"role": "assistant", "content": [{"toolUse": {"toolUseId": "x", "name": "t", "input": {}}}]},
                {"role": "user", "content": [{"toolResult": {"toolUseId": "x", "content": [{"image": {}}]}}]},
            ],
            "neither json nor text",
        ),
    ],
)
def test_a_message_that_is_no_bedrock_tool_segment_is_refused_by_name(
    messages: list[dict[str, Any]], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        from_replay_messages(messages)


def test_a_history_in_another_format_is_refused_naming_the_one_to_ask_for() -> None:
    with pytest.raises(ValueError, match=r"format=.bedrock-converse."):
        to_message_history(_History([_Turn([])], format="openai"))  # type: ignore[arg-type]


# --- Properties over traces -----------------------------------------------------------------------

_ids = st.sampled_from(["", "call_a", "call_b", "call.c", "x" * 70])
_names = st.sampled_from(["lookup", "charge", "notify"])
_results = st.one_of(st.text(max_size=8), st.dictionaries(st.sampled_from("abc"), st.integers(), max_size=2))
_call = st.tuples(
    _ids, _names, st.dictionaries(st.sampled_from("xyz"), st.integers(), max_size=2), _results, st.booleans()
)
_trace = st.lists(st.one_of(st.just([]), st.lists(_call, min_size=1, max_size=4)), max_size=5)


def _messages_of_trace(trace: list[list[tuple[str, str, dict[str, Any], Any, bool]]]) -> list[ModelMessage]:
    """A run as PydanticAI keeps it: per model response its calls, then a request with their returns."""
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("go")])]
    for calls in trace:
        messages.append(
            ModelResponse(
                parts=[ToolCallPart(name, args, tool_call_id=i) for i, name, args, _, _ in calls] or [TextPart("hm")]
            )
        )
        if calls:
            messages.append(
                ModelRequest(
                    parts=[
                        ToolReturnPart(name, result, tool_call_id=i, outcome="failed" if error else "success")
                        for i, name, _, result, error in calls
                    ]
                )
            )
    messages.append(ModelResponse(parts=[TextPart("done")]))
    return messages


@settings(max_examples=60, deadline=None)
@given(_trace)
def test_rounds_and_sequences_number_every_parallel_call_and_pair_each_result(
    trace: list[list[tuple[str, str, dict[str, Any], Any, bool]]],
) -> None:
    record = run_record(_messages_of_trace(trace))
    asked = [calls for calls in trace if calls]

    assert [r.round_index for r in record.rounds] == list(range(len(asked)))
    for round_, calls in zip(record.rounds, asked, strict=True):
        assert [c.sequence_index for c in round_.calls] == list(range(len(calls)))
        assert [(c.tool_call_id, c.tool_name) for c in round_.calls] == [(i, n) for i, n, *_ in calls]
        results = sorted(round_.results, key=lambda r: r.sequence_index)
        assert [r.sequence_index for r in results] == list(range(len(calls)))
        for result, call, (_, _, _, value, error) in zip(results, round_.calls, calls, strict=True):
            assert (result.round_index, result.tool_call_id, result.tool_name) == (
                call.round_index,
                call.tool_call_id,
                call.tool_name,
            )
            assert result.is_error == error
            assert result.result == (value if not error or isinstance(value, str) else result_of_error(value))
    assert len(record.usage) == len(trace) + 1


def result_of_error(value: Any) -> Any:
    return result_of(ToolReturnPart("t", value, tool_call_id="c", outcome="failed"))


@settings(max_examples=60, deadline=None)
@given(_trace)
def test_a_replayed_trace_pairs_every_call_with_its_result_under_the_same_id(
    trace: list[list[tuple[str, str, dict[str, Any], Any, bool]]],
) -> None:
    record = run_record(_messages_of_trace(trace))
    replayed = [
        [
            (c.tool_call_id, c.tool_name, c.arguments, r.result, r.is_error)
            for c, r in zip(round_.calls, sorted(round_.results, key=lambda r: r.sequence_index), strict=True)
        ]
        for round_ in record.rounds
    ]
    messages = from_replay_messages(_bedrock_messages(replayed))

    assert ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages)) == messages
    assert len(messages) == 2 * len(replayed)
    for response, request, calls in zip(messages[::2], messages[1::2], replayed, strict=True):
        assert isinstance(response, ModelResponse)
        assert isinstance(request, ModelRequest)
        call_parts = [p for p in response.parts if isinstance(p, ToolCallPart)]
        return_parts = [p for p in request.parts if isinstance(p, ToolReturnPart)]
        assert [p.tool_call_id for p in call_parts] == [p.tool_call_id for p in return_parts]
        assert all(p.tool_call_id != "" for p in call_parts)
        assert [p.tool_name for p in return_parts] == [name for _, name, *_ in calls]
        assert [p.args for p in call_parts] == [args for _, _, args, _, _ in calls]
        assert [p.outcome == "failed" for p in return_parts] == [error for *_, error in calls]
        assert [p.content for p in return_parts] == [result for _, _, _, result, _ in calls]


# --- Publishing (needs the package's publisher types) ---------------------------------------------


@dataclass
class _Scope:
    run_id: str = "run-1"


@dataclass
class _RecordingRun:
    """Stands in for a RunPublisher: keeps what would be published, in order."""

    scope: _Scope = field(default_factory=_Scope)
    events: list[tuple[str, Any]] = field(default_factory=list)
    fail_on: str | None = None

    def _add(self, kind: str, value: Any) -> None:
        if kind == self.fail_on:
            raise RuntimeError(f"broker refused {kind}")
        self.events.append((kind, value))

    def tool_calls(self, calls: Any) -> None:
        self._add("calls", [(c.round_index, c.sequence_index, c.tool_call_id) for c in calls])

    def tool_results(self, results: Any) -> None:
        self._add("results", [(r.round_index, r.sequence_index, r.tool_call_id, r.is_error) for r in results])

    def approval_requested(self, **kwargs: Any) -> None:
        self._add("approval_requested", kwargs)

    def approval_decided(self, **kwargs: Any) -> None:
        self._add("approval_decided", kwargs)

    def complete(self, **kwargs: Any) -> None:
        self._add("complete", kwargs)

    def fail(self, **kwargs: Any) -> None:
        self._add("fail", kwargs)


async def test_recorded_run_publishes_the_round_then_completes_with_the_hosts_answer_id() -> None:
    from toolhistory.pydantic_ai import recorded_run

    run = _RecordingRun()
    result = await recorded_run(run, _agent(), "Where is my order?", assistant_message_id="answer-1")  # type: ignore[arg-type]

    assert result.output == "Order A-1 shipped."
    kinds = [kind for kind, _ in run.events]
    assert kinds == ["calls", "results", "complete"]
    assert run.events[0][1] == [(0, 0, "call_order"), (0, 1, "call_charge"), (0, 2, ""), (0, 3, "call_refund")]
    complete = run.events[-1][1]
    assert complete["assistant_message_id"] == "answer-1"
    assert complete["finish_reason"] == "stop"
    assert [(u.input_tokens, u.output_tokens) for u in complete["usage"]] == [(120, 40), (300, 12)]


async def test_a_run_that_raises_records_its_finished_rounds_and_fails_then_raises_again() -> None:
    from toolhistory.pydantic_ai import recorded_run

    calls = 0

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal calls
        calls += 1
        tool = "lookup_order" if calls == 1 else "explode"
        return ModelResponse(
            parts=[ToolCallPart(tool, {}, tool_call_id=f"call_{calls}")],
            usage=RequestUsage(input_tokens=10, output_tokens=1),
        )

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def lookup_order() -> str:
        return "shipped"

    @agent.tool_plain
    def explode() -> str:
        raise ConnectionError("upstream down")

    run = _RecordingRun()
    with pytest.raises(ConnectionError, match="upstream down"):
        await recorded_run(run, agent, "go", assistant_message_id=None)  # type: ignore[arg-type]

    kinds = [kind for kind, _ in run.events]
    assert kinds == ["calls", "results", "calls", "fail"]
    failure = run.events[-1][1]
    assert (failure["error"].code, failure["error"].message) == ("ConnectionError", "upstream down")
    assert len(failure["usage"]) == 2


async def test_a_publisher_error_while_recording_a_failure_leaves_the_runs_own_error() -> None:
    from toolhistory.pydantic_ai import recorded_run

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise TimeoutError("model timed out")

    run = _RecordingRun(fail_on="fail")
    with pytest.raises(TimeoutError, match="model timed out"):
        await recorded_run(run, Agent(FunctionModel(model)), "go", assistant_message_id="a")  # type: ignore[arg-type]
    assert run.events == []


def _approval_agent(lookup_result: str) -> Agent[None, str | DeferredToolRequests]:
    """The first turn's agent with charge_card and refund waiting for a person's approval."""
    agent = Agent(FunctionModel(_first_turn_model), output_type=[str, DeferredToolRequests])

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return lookup_result

    @agent.tool_plain(requires_approval=True)
    def charge_card(amount: int) -> str:
        return "charged"

    @agent.tool_plain(requires_approval=True)
    def refund(amount: int) -> str:
        return "refunded"

    return agent


async def test_recorded_runs_publish_approval_requests_then_the_resumed_runs_decisions_and_result() -> None:
    from toolhistory.pydantic_ai import recorded_run

    agent = _approval_agent(lookup_result="shipped")

    paused_run = _RecordingRun()
    paused = await recorded_run(
        paused_run,  # type: ignore[arg-type]
        agent,
        "go",
        assistant_message_id="a-1",
        approval_reason=lambda call: f"{call.tool_name} needs a person",
    )
    assert [kind for kind, _ in paused_run.events] == [
        "calls",
        "results",
        "approval_requested",
        "approval_requested",
        "complete",
    ]
    assert paused_run.events[2][1]["reason"] == "charge_card needs a person"
    assert paused_run.events[-1][1]["finish_reason"] == "tool_limit"

    resumed_run = _RecordingRun(scope=_Scope("run-2"))
    await recorded_run(
        resumed_run,  # type: ignore[arg-type]
        agent,
        None,
        assistant_message_id="a-2",
        message_history=paused.all_messages(),
        deferred_tool_results=DeferredToolResults(approvals={"call_charge": True, "call_refund": False}),
        decided_by="desk-3",
    )
    assert [kind for kind, _ in resumed_run.events] == ["approval_decided", "approval_decided", "results", "complete"]
    assert [(e["tool_call_id"], e["approved"], e["decided_by"]) for _, e in resumed_run.events[:2]] == [
        ("call_charge", True, "desk-3"),
        ("call_refund", False, "desk-3"),
    ]
    assert resumed_run.events[2][1] == [(0, 1, "call_charge", False)]
    assert resumed_run.events[-1][1]["finish_reason"] == "stop"


# --- The cited sources of the answer ----------------------------------------------------------------


def _search_then_answer(answer: str) -> FunctionModel:
    """One search round, then ``answer``."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("web_search", {"q": "rain"}, tool_call_id="call_s")])
        return ModelResponse(parts=[TextPart(answer)])

    return FunctionModel(model)


def _search_agent(model: FunctionModel, **options: Any) -> Agent[None, Any]:
    agent: Agent[None, Any] = Agent(model, **options)

    @agent.tool_plain
    def web_search(q: str) -> dict[str, Any]:
        return {"results": [{"sourceNumber": n} for n in range(1, 6)]}

    return agent


@pytest.mark.parametrize(
    ("option", "answer", "expected"),
    [
        ({"cited_sources_from_answer": True}, "Rain [source4], says the radar [source2].", [2, 4]),
        ({"cited_sources_from_answer": True}, "Rain.", []),
        ({"cited_sources_from_answer": False}, "Rain [source4].", None),
        ({}, "Rain [source4].", None),
    ],
    ids=["on: the numbers the answer cites", "on: no citation is []", "off: left out", "by default: left out"],
)
async def test_recorded_run_reads_the_cited_sources_of_the_answer_when_asked(
    option: dict[str, Any], answer: str, expected: list[int] | None
) -> None:
    from toolhistory.pydantic_ai import recorded_run

    run = _RecordingRun()
    await recorded_run(run, _search_agent(_search_then_answer(answer)), "rain?", assistant_message_id="a", **option)  # type: ignore[arg-type]

    kind, complete = run.events[-1]
    assert (kind, complete["finish_reason"], complete["cited_sources"]) == ("complete", "stop", expected)


async def test_a_structured_answer_is_read_as_its_json_text() -> None:
    from toolhistory.pydantic_ai import recorded_run

    class Answer(BaseModel):
        text: str

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        (output_tool,) = info.output_tools
        answer = {"text": "Rain [source3] and wind [source1]."}
        return ModelResponse(parts=[ToolCallPart(output_tool.name, answer, tool_call_id="call_out")])

    run = _RecordingRun()
    agent = Agent(FunctionModel(model), output_type=Answer)
    result = await recorded_run(run, agent, "rain?", assistant_message_id="a", cited_sources_from_answer=True)  # type: ignore[arg-type]

    assert result.output == Answer(text="Rain [source3] and wind [source1].")
    assert run.events[-1][1]["cited_sources"] == [1, 3]


async def test_a_run_without_an_answer_or_a_failed_one_carries_no_cited_sources() -> None:
    from toolhistory.pydantic_ai import recorded_run

    agent = _approval_agent(lookup_result="shipped [source1]")

    # Stopped for approvals: a later run's answer may cite this run's results.
    paused = _RecordingRun()
    await recorded_run(paused, agent, "go", assistant_message_id="a", cited_sources_from_answer=True)  # type: ignore[arg-type]
    assert (paused.events[-1][1]["finish_reason"], paused.events[-1][1]["cited_sources"]) == ("tool_limit", None)

    def failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise TimeoutError("model timed out")

    failed = _RecordingRun()
    failing_agent = Agent(FunctionModel(failing))
    with pytest.raises(TimeoutError):
        await recorded_run(failed, failing_agent, "go", assistant_message_id="a", cited_sources_from_answer=True)  # type: ignore[arg-type]
    assert [kind for kind, _ in failed.events] == ["fail"]
    assert "cited_sources" not in failed.events[0][1]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Rain [source2].", "Rain [source2]."),
        ({"answer": "Rain [source2]."}, '{"answer":"Rain [source2]."}'),
        (None, None),
        (DeferredToolRequests(), None),
    ],
)
def test_the_answer_text_of_an_output(output: object, expected: str | None) -> None:
    from toolhistory.pydantic_ai import answer_text_of

    assert answer_text_of(output) == expected
