"""ToolHistorySession against the running service: the SDK's Session with the tool calls kept by toolhistory and the
rest by the SDK's own SQLiteSession (in memory), compared with that plain SQLiteSession on the same runs.

What the model is given is compared without a function call's item ``id``: the replay gives a call its provider item
id only beside the reasoning item it follows (without reasoning the API takes the call without one); and an assistant
message by its text: the text a model said beside its calls comes back as an input message, not as the output item
(its id and status) the API gave.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.extensions.memory import AsyncSQLiteSession, SQLAlchemySession
from agents.memory import SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseReasoningItem

from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.openai_agents import DEFAULT_TOOL_ERROR_TEXT, ToolHistorySession
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from pathlib import Path

    from toolhistory.publisher import ToolEventPublisher

    from conftest import Stack

pytestmark = pytest.mark.integration

NO_TRACING = RunConfig(tracing_disabled=True)


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up."""
    return {"status": "shipped", "order": order_id}


@function_tool
def charge_card(amount: int) -> str:
    """Charge the card."""
    raise RuntimeError("card declined")


@function_tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order (a person approves it first)."""
    return f"refunded {order_id}"


TOOLS = [lookup_order, charge_card, refund]


def agent_of(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="support", instructions="Help with orders.", model=model, tools=TOOLS)


def comparable(items: list[Any]) -> list[Any]:
    """Items as compared: a function call without its provider item id, an assistant message as its text."""
    return [_comparable(item) for item in items]


def _comparable(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    if item.get("type") == "function_call":
        return {key: value for key, value in item.items() if key != "id"}
    if item.get("role") == "assistant" and item.get("type") in (None, "message"):
        content = item.get("content")
        text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content or [])
        return {"role": "assistant", "text": text}
    return item


def of_type(items: list[Any], kind: str) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict) and item.get("type") == kind]


@dataclass(frozen=True)
class Stores:
    """A plain SQLiteSession and a ToolHistorySession over another, for one conversation each."""

    plain: SQLiteSession
    decorated: ToolHistorySession


def stores_of(stack: Stack, publisher: ToolEventPublisher, client: AsyncToolHistoryClient, name: str) -> Stores:
    return Stores(
        plain=SQLiteSession(f"{name}-plain"),
        decorated=ToolHistorySession(
            SQLiteSession(name), publisher=publisher, client=client, tenant_id=stack.tenant, channel="chat"
        ),
    )


def async_client(stack: Stack) -> AsyncToolHistoryClient:
    return AsyncToolHistoryClient(stack.address, token=stack.token, tls=stack.tls or False)


async def turn_inputs(session: Any, turns: list[tuple[str, list[Any]]]) -> list[list[Any]]:
    """Runs each turn (its user text and the model's script) on ``session``; what the model was given, per call."""
    seen: list[list[Any]] = []
    for text, steps in turns:
        model = ScriptedModel(copy.deepcopy(steps))
        await Runner.run(agent_of(model), text, session=session, run_config=NO_TRACING)
        seen.extend(comparable(list(call.input)) for call in model.calls)
    return seen


async def test_a_second_turn_sees_the_first_turns_parallel_calls_and_error_as_the_plain_session_gives_them(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    stores = stores_of(stack, publisher, aclient, ids("conv"))
    order_call, charge_call, recheck_call = ids("call_order"), ids("call_charge"), ids("call_recheck")
    turns: list[tuple[str, list[Any]]] = [
        (
            "Where is order A-1? Charge 30 for shipping.",
            [
                [
                    function_call("lookup_order", {"order_id": "A-1"}, call_id=order_call),
                    function_call("charge_card", {"amount": 30}, call_id=charge_call),
                ],
                [assistant_message("A-1 has shipped; the card was declined.", item_id="msg-a1")],
            ],
        ),
        (
            "Has it arrived yet?",
            [
                [function_call("lookup_order", {"order_id": "A-1"}, call_id=recheck_call)],
                [assistant_message("Still shipped.", item_id="msg-a2")],
            ],
        ),
    ]

    plain = await turn_inputs(stores.plain, turns)
    decorated = await turn_inputs(stores.decorated, turns)

    assert decorated == plain
    second_turn_first_call = decorated[2]
    assert [item["call_id"] for item in of_type(second_turn_first_call, "function_call")] == [order_call, charge_call]
    outputs = {item["call_id"]: item["output"] for item in of_type(second_turn_first_call, "function_call_output")}
    assert outputs == {order_call: "{'status': 'shipped', 'order': 'A-1'}", charge_call: DEFAULT_TOOL_ERROR_TEXT}
    # The calls are toolhistory's: the inner session has only the messages.
    inner_types = {item.get("type", "message") for item in await stores.decorated.inner.get_items()}
    assert inner_types == {"message"}
    history = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=stores.decorated.conversation_id, format="openai-responses"
    )
    assert [[call.is_error for r in turn.rounds for call in r.calls] for turn in history.turns] == [
        [False, True],
        [False],
    ]


async def test_a_call_saved_without_an_id_comes_back_with_one_id_on_the_call_and_its_output(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    """The SDK's runner refuses to run a call without an id (``ModelBehaviorError``), but a host may save one (items
    from another model's loop): the service derives an id from the run, round and sequence, the same on the call and
    its output and on every replay, so the next model call can pair them."""
    session = stores_of(stack, publisher, aclient, ids("conv")).decorated
    id_less = {**CALL, "call_id": ""}
    for step in [add(USER), add(id_less, {**OUTPUT, "call_id": ""}), add(ANSWER), add(USER_2)]:
        await step(session)

    items = await session.get_items()
    [call] = of_type(items, "function_call")
    [output] = of_type(items, "function_call_output")
    assert call["call_id"] != ""
    assert (output["call_id"], output["output"]) == (call["call_id"], "shipped")
    assert comparable(items) == comparable([USER, {**id_less, "call_id": call["call_id"]}, output, ANSWER, USER_2])
    assert of_type(await session.get_items(), "function_call") == [call]
    [recorded] = [
        i async for i in aclient.list_tool_invocations(tenant_id=stack.tenant, conversation_id=session.conversation_id)
    ]
    assert recorded.tool_call_id == ""


INNER_STORES: dict[str, Callable[[str, Path], Any]] = {
    "SQLAlchemySession": lambda name, db: SQLAlchemySession.from_url(
        name, url=f"sqlite+aiosqlite:///{db}", create_tables=True
    ),
    "AsyncSQLiteSession": lambda name, db: AsyncSQLiteSession(name, db_path=db),
}


@pytest.mark.parametrize("store", list(INNER_STORES))
async def test_over_the_sdks_other_stores_each_turn_in_another_process_sees_what_the_plain_store_gives(
    store: str,
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """``inner`` is another of the SDK's stores, on disk; each turn opens new session objects over it, as a new
    process would."""
    opened = INNER_STORES[store]
    name = ids("conv")
    turns: list[tuple[str, list[Any]]] = [
        (
            "Where is order A-1? Charge 30.",
            [
                [
                    function_call("lookup_order", {"order_id": "A-1"}, call_id=ids("call_order")),
                    function_call("charge_card", {"amount": 30}, call_id=ids("call_charge")),
                ],
                [assistant_message("A-1 has shipped; the card was declined.", item_id="msg-a1")],
            ],
        ),
        ("And now?", [[assistant_message("Still shipped.", item_id="msg-a2")]]),
    ]

    def decorated() -> ToolHistorySession:
        return ToolHistorySession(
            opened(name, tmp_path / "decorated.db"),
            publisher=publisher,
            client=aclient,
            tenant_id=stack.tenant,
            channel="chat",
        )

    with_toolhistory = [seen for turn in turns for seen in await turn_inputs(decorated(), [turn])]
    plain = [seen for turn in turns for seen in await turn_inputs(opened(name, tmp_path / "plain.db"), [turn])]

    assert with_toolhistory == plain
    assert len(of_type(with_toolhistory[-1], "function_call")) == 2


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
@pytest.mark.parametrize("one_session_object", [True, False], ids=["same session", "another session object"])
async def test_an_approval_paused_and_resumed_through_run_state_is_recorded_and_seen_by_the_next_turn(
    approved: bool,
    one_session_object: bool,
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
) -> None:
    conversation = ids("conv")
    inner = SQLiteSession(conversation)
    refund_call = ids("call_refund")
    model = ScriptedModel(
        [
            [function_call("refund", {"order_id": "A-1"}, call_id=refund_call)],
            [assistant_message("Done.", item_id="msg-done")],
            [assistant_message("Nothing else.", item_id="msg-later")],
        ]
    )
    agent = agent_of(model)
    shared = ToolHistorySession(inner, publisher=publisher, client=aclient, tenant_id=stack.tenant, channel="chat")

    def session() -> ToolHistorySession:
        """The same object, or a new one over the same store (as another process resumes the state)."""
        if one_session_object:
            return shared
        return ToolHistorySession(inner, publisher=publisher, client=aclient, tenant_id=stack.tenant, channel="chat")

    paused = await Runner.run(agent, "Refund A-1.", session=session(), run_config=NO_TRACING)
    [approval] = paused.interruptions
    waiting = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses"
    )
    assert [p.tool_call_id for p in waiting.pending_approvals] == [refund_call]

    state = paused.to_state()
    if approved:
        state.approve(approval)
    else:
        state.reject(approval, rejection_message="Refunds are closed today.")
    resumed = await Runner.run(agent, state, session=session(), run_config=NO_TRACING)
    assert resumed.final_output == "Done."

    await Runner.run(agent, "Anything else?", session=session(), run_config=NO_TRACING)
    seen = comparable(list(model.calls[-1].input))
    assert of_type(seen, "function_call") == [
        {"type": "function_call", "call_id": refund_call, "name": "refund", "arguments": '{"order_id":"A-1"}'}
    ]
    [output] = of_type(seen, "function_call_output")
    history = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses"
    )
    assert list(history.pending_approvals) == []
    [call] = [call for turn in history.turns for r in turn.rounds for call in r.calls]
    if approved:
        assert output["output"] == "refunded A-1"
        assert (call.tool_call_id, call.is_error, call.result) == (refund_call, False, "refunded A-1")
    else:
        # The call did not run: the service replays its denial, with the person's reason.
        assert (call.tool_call_id, call.approval) == (refund_call, toolhistory_pb2.APPROVAL_STATUS_DENIED)
        assert "Refunds are closed today." in output["output"]


async def test_reasoning_items_go_with_their_round_and_rest_as_the_policy_says(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("conv")
    session = ToolHistorySession(
        SQLiteSession(conversation),
        publisher=publisher,
        client=aclient,
        tenant_id=stack.tenant,
        channel="chat",
        model="gpt-test",
    )
    first, second = ids("call_first"), ids("call_second")

    def reasoning(item_id: str) -> ResponseReasoningItem:
        return ResponseReasoningItem(id=item_id, type="reasoning", summary=[], encrypted_content=f"sealed-{item_id}")

    model = ScriptedModel(
        [
            [reasoning("rs_1"), function_call("lookup_order", {"order_id": "A-1"}, call_id=first, item_id="fc_1")],
            [reasoning("rs_2"), function_call("lookup_order", {"order_id": "B-2"}, call_id=second, item_id="fc_2")],
            [assistant_message("Both shipped.", item_id="msg-both")],
            [assistant_message("Yes.", item_id="msg-yes")],
        ]
    )
    await Runner.run(agent_of(model), "Where are A-1 and B-2?", session=session, run_config=NO_TRACING)
    history = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses"
    )
    [turn] = history.turns
    assert [(r.provider, r.model) for r in turn.rounds] == [("openai", "gpt-test"), ("openai", "gpt-test")]
    assert [item.get("type", "message") for item in await session.inner.get_items()] == ["message", "message"]

    await Runner.run(agent_of(model), "Sure?", session=session, run_config=NO_TRACING)
    # The turn ended with its answer: its reasoning rests no longer (the policy's default, keep "turn").
    seen = list(model.calls[-1].input)
    assert of_type(seen, "reasoning") == []
    assert [item["call_id"] for item in of_type(seen, "function_call")] == [first, second]


@function_tool(failure_error_function=None)
def cancel_order(order_id: str) -> str:
    """Cancel an order; the process running it dies here (the tool's error is not handed to the model)."""
    raise RuntimeError("worker killed")


@pytest.mark.parametrize(
    ("channel", "first_round_replayed"),
    [("long-runs", True), ("chat", False)],
    ids=["per_service_call keeps the finished round", "per_run drops the crashed run"],
)
async def test_a_run_that_crashed_after_its_rounds_is_resumed_by_another_session_as_the_channel_says(
    channel: str,
    first_round_replayed: bool,
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
) -> None:
    """The process dies in the run's third round: its session object (and the run it recorded) is gone. Another
    process opens a session over the same store. The SDK saves a round's calls together with their outputs, after its
    tools ran, so the session never learns that the second round's results reached the model that asked for the
    third: with ``per_service_call`` visibility the next turn's model sees the first round, whose results reached a
    later service call, and not the second (trailing, as if unsent; the model calls that tool again); with completed
    runs only, neither."""
    conversation = ids("conv")
    inner = SQLiteSession(conversation)
    first, second, cut_short = ids("call_first"), ids("call_second"), ids("call_cancel")
    model = ScriptedModel(
        [
            [function_call("lookup_order", {"order_id": "A-1"}, call_id=first)],
            [function_call("lookup_order", {"order_id": "B-2"}, call_id=second)],
            [function_call("cancel_order", {"order_id": "A-1"}, call_id=cut_short)],
            [assistant_message("Where were we?", item_id="msg-resumed")],
        ]
    )
    agent = Agent(name="support", model=model, tools=[lookup_order, cancel_order])

    def opened() -> ToolHistorySession:
        return ToolHistorySession(inner, publisher=publisher, client=aclient, tenant_id=stack.tenant, channel=channel)

    with pytest.raises(Exception, match="worker killed"):
        await Runner.run(agent, "Cancel A-1 if B-2 has shipped.", session=opened(), run_config=NO_TRACING)
    await Runner.run(agent, "Still there?", session=opened(), run_config=NO_TRACING)

    seen = comparable(list(model.calls[-1].input))
    question, again = (
        {"role": "user", "content": "Cancel A-1 if B-2 has shipped."},
        {"role": "user", "content": "Still there?"},
    )
    if first_round_replayed:
        assert seen == [
            question,
            {"type": "function_call", "call_id": first, "name": "lookup_order", "arguments": '{"order_id":"A-1"}'},
            {"type": "function_call_output", "call_id": first, "output": "{'status': 'shipped', 'order': 'A-1'}"},
            again,
        ]
    else:
        assert seen == [question, again]
    history = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, format="openai-responses", channel=channel
    )
    reason = (
        toolhistory_pb2.OMISSION_REASON_TRAILING_UNSENT
        if first_round_replayed
        else toolhistory_pb2.OMISSION_REASON_RUN_INCOMPLETE
    )
    assert [(o.tool_call_id, o.reason) for o in history.omitted] == [
        *([] if first_round_replayed else [(first, reason)]),
        (second, reason),
    ]
    # Audit keeps both finished rounds; the call the crash cut short was never saved by the SDK.
    recorded = [i async for i in aclient.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation)]
    assert [(i.tool_call_id, i.HasField("completed_at")) for i in recorded] == [(first, True), (second, True)]


# The Session behaviours, as a table: each case applies the same steps to the plain SQLiteSession and to the
# decorator, then compares what get_items (with the case's limit) and each pop_item return.

Step = Callable[[Any], Awaitable[Any]]


def add(*items: dict[str, Any]) -> Step:
    return lambda session: session.add_items(copy.deepcopy(list(items)))


def pop() -> Step:
    return lambda session: session.pop_item()


def clear() -> Step:
    return lambda session: session.clear_session()


USER = {"role": "user", "content": "Where is A-1?"}
USER_2 = {"role": "user", "content": "And B-2?"}
ANSWER = {
    "type": "message",
    "role": "assistant",
    "id": "msg-1",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Shipped.", "annotations": []}],
}
CALL = {"type": "function_call", "call_id": "call-a", "name": "lookup_order", "arguments": '{"order_id":"A-1"}'}
CALL_2 = {"type": "function_call", "call_id": "call-b", "name": "lookup_order", "arguments": '{"order_id":"B-2"}'}
OUTPUT = {"type": "function_call_output", "call_id": "call-a", "output": "shipped"}
OUTPUT_2 = {"type": "function_call_output", "call_id": "call-b", "output": DEFAULT_TOOL_ERROR_TEXT}
TURN = [add(USER), add(CALL, CALL_2, OUTPUT, OUTPUT_2), add(ANSWER)]

SESSION_CASES: dict[str, tuple[list[Step], list[int | None]]] = {
    "empty": ([], [None, 1]),
    "messages only, in order": ([add(USER), add(ANSWER), add(USER_2)], [None, 1, 2, 3, 5, 0]),
    "a turn with parallel calls and an error, in order": (TURN, [None, 1, 2, 3, 4, 6, 7]),
    "two turns": ([*TURN, add(USER_2)], [None, 2, 4]),
    "a popped user message": ([add(USER), pop()], [None]),
    "a popped question after a turn": ([*TURN, add(USER_2), pop()], [None, 1]),
    "cleared": ([*TURN, clear()], [None]),
    "cleared, then a new turn": ([*TURN, clear(), add(USER_2), add(ANSWER)], [None, 1]),
}


@pytest.mark.parametrize("case", list(SESSION_CASES))
async def test_the_session_behaves_as_the_plain_session(
    case: str,
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
) -> None:
    steps, limits = SESSION_CASES[case]
    stores = stores_of(stack, publisher, aclient, ids("conv"))
    plain_pops = [await step(stores.plain) for step in steps]
    decorated_pops = [await step(stores.decorated) for step in steps]
    assert comparable([p for p in decorated_pops if p is not None]) == comparable(
        [p for p in plain_pops if p is not None]
    )
    for limit in limits:
        assert comparable(await stores.decorated.get_items(limit)) == comparable(await stores.plain.get_items(limit)), (
            f"limit {limit}"
        )


@pytest.mark.parametrize("settings_limit", [1, 3, 6])
async def test_the_inner_sessions_settings_limit_applies_as_with_the_plain_session(
    settings_limit: int,
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
) -> None:
    """``get_items()`` without a limit gives the latest ``session_settings.limit`` items, replayed ones counted."""
    name = ids("conv")
    limited = SessionSettings(limit=settings_limit)
    plain = SQLiteSession(f"{name}-plain", session_settings=limited)
    decorated = ToolHistorySession(
        SQLiteSession(name, session_settings=limited),
        publisher=publisher,
        client=aclient,
        tenant_id=stack.tenant,
        channel="chat",
    )
    for step in [*TURN, add(USER_2)]:
        await step(plain)
        await step(decorated)
    assert decorated.session_settings == limited
    assert comparable(await decorated.get_items()) == comparable(await plain.get_items())
    assert len(await decorated.get_items()) == settings_limit
    assert comparable(await decorated.get_items(7)) == comparable(await plain.get_items(7))


async def test_a_popped_answer_takes_its_runs_calls_off_the_replay(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    """Where the decorator differs from the plain session, by design: the service replays a completed run beside its
    answer only."""
    stores = stores_of(stack, publisher, aclient, ids("conv"))
    for step in TURN:
        await step(stores.decorated)
    popped = await stores.decorated.pop_item()
    assert popped == ANSWER
    assert await stores.decorated.get_items() == [USER]


async def test_a_run_without_an_answer_keeps_the_rounds_the_model_saw_the_results_of(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    """Where the decorator differs from the plain session, by design: a run that ended after its calls (its turn
    limit) is closed by the next question, and the service trims its last round, whose results no model saw."""
    stores = stores_of(stack, publisher, aclient, ids("conv"))
    for step in [add(USER), add(CALL, OUTPUT), add(CALL_2, OUTPUT_2), add(USER_2)]:
        await step(stores.decorated)
    assert comparable(await stores.decorated.get_items()) == [USER, CALL, OUTPUT, USER_2]


async def test_clear_session_with_erase_removes_the_recorded_calls(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    stores = stores_of(stack, publisher, aclient, ids("conv"))
    for step in TURN:
        await step(stores.decorated)
    await stores.decorated.clear_session()
    kept = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=stores.decorated.conversation_id, format="openai-responses"
    )
    assert len(kept.turns) == 1  # audit keeps them; the session's branch no longer holds them
    await stores.decorated.clear_session(erase=True)
    erased = await aclient.get_replay_history(
        tenant_id=stack.tenant, conversation_id=stores.decorated.conversation_id, format="openai-responses"
    )
    assert erased.turns == []


# A property over generated runs: each turn's rounds of calls (a lookup that answers, a charge that fails), then the
# answer; the model is given the same input with the decorator as with the plain session, turn after turn.

CALL_KINDS = st.sampled_from(["lookup_order", "charge_card"])
# A round: its calls, and whether the model says something beside them ("I'll look it up").
ROUNDS = st.lists(st.tuples(st.lists(CALL_KINDS, min_size=1, max_size=3), st.booleans()), min_size=0, max_size=2)
RUNS = st.lists(ROUNDS, min_size=1, max_size=3)


def script_of(runs: list[list[tuple[list[str], bool]]], prefix: str) -> list[tuple[str, list[Any]]]:
    turns: list[tuple[str, list[Any]]] = []
    for turn, rounds in enumerate(runs):
        steps: list[Any] = [
            [
                *([assistant_message(f"checking {turn}-{r}", item_id=f"msg-{turn}-{r}")] if says else []),
                *(
                    function_call(
                        kind,
                        {"order_id": f"A-{turn}-{r}-{c}"} if kind == "lookup_order" else {"amount": c + 1},
                        call_id=f"{prefix}-{turn}-{r}-{c}",
                    )
                    for c, kind in enumerate(calls)
                ),
            ]
            for r, (calls, says) in enumerate(rounds)
        ]
        steps.append([assistant_message(f"answer {turn}", item_id=f"msg-{turn}")])
        turns.append((f"question {turn}", steps))
    return turns


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=RUNS)
def test_generated_runs_give_the_model_the_same_input_as_the_plain_session(
    runs: list[list[tuple[list[str], bool]]], stack: Stack, publisher: ToolEventPublisher, ids: Callable[[str], str]
) -> None:
    async def scenario() -> None:
        async with async_client(stack) as client:
            stores = stores_of(stack, publisher, client, ids("conv"))
            script = script_of(runs, ids("call"))
            assert await turn_inputs(stores.decorated, script) == await turn_inputs(stores.plain, script)

    asyncio.run(scenario())
