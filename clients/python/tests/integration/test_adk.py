"""Two turns of a Google ADK agent against the service: ``ToolHistorySessionService`` over ADK's own
``InMemorySessionService`` records the tool events and gives them back in their places, so the second turn's model
sees exactly what it sees with the plain in-memory service."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, DatabaseSessionService, InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import Field

from toolhistory.adk import ToolHistorySessionService
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.v1 import toolhistory_pb2

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Callable
    from pathlib import Path

    from google.adk.models.llm_request import LlmRequest

    from toolhistory.publisher import ToolEventPublisher

    from conftest import Stack

pytestmark = pytest.mark.integration

APP, USER, CHANNEL = "orders-app", "user-1", "web"
REASONING_KEPT = "reasoning-kept"
"""A channel whose policy keeps a completed turn's reasoning (test/client/python-package.e2e-spec.ts)."""
QUESTIONS = ("Where is A-1 and B-2? And charge me 30.", "Try the charge again?")


class ScriptedGemini(BaseLlm):
    """A model that answers from a script, keyed by the question of the turn, and keeps every request's contents."""

    seen: list[list[dict[str, Any]]] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        contents = [c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents]
        self.seen.append(contents)
        yield _answer(llm_request.contents)


def _answer(contents: list[types.Content]) -> LlmResponse:
    last = contents[-1]
    question = next((p.text for p in last.parts or [] if p.text), None) if last.role == "user" else None
    if question == QUESTIONS[0]:
        # Parallel calls with a thought and its signatures; one call without an id (ADK gives it one).
        return LlmResponse(
            model_version="gemini-scripted",
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=100, candidates_token_count=20
            ),
            content=types.Content(
                role="model",
                parts=[
                    types.Part(text="The orders first, then the card.", thought=True),
                    types.Part(
                        function_call=types.FunctionCall(id="call-a1", name="lookup_order", args={"order_id": "A-1"}),
                        thought_signature=b"signature-a1",
                    ),
                    types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order_id": "B-2"})),
                    types.Part(
                        function_call=types.FunctionCall(id="call-charge", name="charge_card", args={"amount": 30})
                    ),
                ],
            ),
        )
    if any(p.function_response for p in last.parts or []):
        return LlmResponse(
            model_version="gemini-scripted",
            content=types.Content(role="model", parts=[types.Part(text="A-1 and B-2 shipped; the card was declined.")]),
        )
    return LlmResponse(
        model_version="gemini-scripted",
        content=types.Content(role="model", parts=[types.Part(text="It was declined before; I will not retry.")]),
    )


def lookup_order(order_id: str, tool_context: ToolContext) -> dict[str, Any]:
    """Looks an order up."""
    tool_context.state["last_order"] = order_id
    return {"order_id": order_id, "status": "shipped"}


def charge_card(amount: int) -> dict[str, Any]:
    """Charges the card."""
    return {"error": f"card declined for {amount}"}


async def _converse(
    service: BaseSessionService, session_id: str, *, next_turns_by: Callable[[], BaseSessionService] | None = None
) -> list[list[dict[str, Any]]]:
    """Both turns through ``service`` (the second through a new one from ``next_turns_by``, as another process over
    the same store): what the model was sent, request by request."""
    model = ScriptedGemini(model="gemini-scripted", seen=[])
    agent = LlmAgent(name="orders", model=model, tools=[lookup_order, charge_card])
    await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for turn, question in enumerate(QUESTIONS):
        turn_service = next_turns_by() if next_turns_by is not None and turn > 0 else service
        runner = Runner(agent=agent, app_name=APP, session_service=turn_service)
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
            pass
    return model.seen


def _without_call_ids(requests: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The requests with ADK's own call ids (``adk-<uuid>``, new each run) as one placeholder."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("adk-id" if k == "id" and str(v).startswith("adk-") else scrub(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    return [scrub(request) for request in requests]


def _without_reasoning_of_answered_turns(requests: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Each request without the thoughts and thought signatures of the turns before its own (they all answered)."""

    def bare(content: dict[str, Any]) -> dict[str, Any]:
        parts = [
            {k: v for k, v in p.items() if k != "thought_signature"} for p in content["parts"] if not p.get("thought")
        ]
        return {**content, "parts": parts}

    out: list[list[dict[str, Any]]] = []
    for request in requests:
        own_turn = max(i for i, c in enumerate(request) if c["role"] == "user" and any("text" in p for p in c["parts"]))
        out.append([bare(c) if i < own_turn else c for i, c in enumerate(request)])
    return out


async def test_the_second_turn_sees_the_first_turns_calls_as_with_the_plain_in_memory_service(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("adk-conv")
    inner = InMemorySessionService()
    service = ToolHistorySessionService(
        inner, publisher=publisher, client=aclient, tenant_id=stack.tenant, channel=REASONING_KEPT
    )

    with_toolhistory = await _converse(service, conversation)
    plain = await _converse(InMemorySessionService(), "plain")

    assert _without_call_ids(with_toolhistory) == _without_call_ids(plain)
    second_turn = with_toolhistory[-1]
    sent_calls = [p["function_call"]["name"] for c in second_turn for p in c["parts"] if "function_call" in p]
    assert sent_calls == ["lookup_order", "lookup_order", "charge_card"]
    signatures = [p.get("thought_signature") for c in second_turn for p in c["parts"] if "function_call" in p]
    assert signatures[0] == "c2lnbmF0dXJlLWEx"  # base64 of b"signature-a1": Gemini gets its signature back
    responses = [
        p["function_response"]["response"] for c in second_turn for p in c["parts"] if "function_response" in p
    ]
    assert responses[-1] == {"error": "card declined for 30"}

    # The calls are toolhistory's, the rest (and the tools' state) the inner service's.
    kept = await inner.get_session(app_name=APP, user_id=USER, session_id=conversation)
    assert kept is not None
    assert not any(e.content and any(p.function_call for p in e.content.parts or []) for e in kept.events)
    assert kept.state["last_order"] == "B-2"

    # GetSessionConfig counts the events the runner sees: the replayed ones included, ADK's way.
    everything = await service.get_session(app_name=APP, user_id=USER, session_id=conversation)
    recent = await service.get_session(
        app_name=APP, user_id=USER, session_id=conversation, config=GetSessionConfig(num_recent_events=3)
    )
    assert everything is not None
    assert recent is not None
    assert [e.id for e in recent.events] == [e.id for e in everything.events[-3:]]


async def test_by_default_a_completed_turns_reasoning_is_not_replayed_and_the_rest_is_as_with_the_plain_service(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    service = ToolHistorySessionService(
        InMemorySessionService(), publisher=publisher, client=aclient, tenant_id=stack.tenant, channel=CHANNEL
    )

    with_toolhistory = await _converse(service, ids("adk-conv"))
    plain = await _converse(InMemorySessionService(), "plain")

    # reasoning.keep "turn" (the default): the thoughts and signatures of a turn that answered are let go.
    assert _without_call_ids(with_toolhistory) == _without_call_ids(_without_reasoning_of_answered_turns(plain))


class ScriptOfResponses(BaseLlm):
    """Answers with the next response of its script, and keeps every request's contents."""

    script: list[LlmResponse] = Field(default_factory=list)
    seen: list[list[dict[str, Any]]] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append([c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents])
        yield self.script.pop(0)


calls_of_a_round = st.lists(
    st.tuples(
        st.sampled_from(["lookup_order", "charge_card"]),
        st.integers(1, 99),
        st.booleans(),  # with an id of the model's, else ADK's own
        st.binary(min_size=1, max_size=8) | st.none(),  # the call's thought signature
    ),
    min_size=1,
    max_size=3,
)


def _script(rounds: list[list[tuple[str, int, bool, bytes | None]]]) -> list[LlmResponse]:
    """Turn 1: a response per round (its calls), then the answer; turn 2: an answer."""
    script: list[LlmResponse] = []
    for r, calls in enumerate(rounds):
        parts = [
            types.Part(
                function_call=types.FunctionCall(
                    id=f"call-{r}-{i}" if with_id else None,
                    name=name,
                    args={"order_id": f"O-{n}"} if name == "lookup_order" else {"amount": n},
                ),
                thought_signature=signature,
            )
            for i, (name, n, with_id, signature) in enumerate(calls)
        ]
        script.append(LlmResponse(model_version="gemini-scripted", content=types.Content(role="model", parts=parts)))
    script.append(_text_response("Done with turn 1."))
    script.append(_text_response("Turn 2 answered."))
    return script


def _text_response(text: str) -> LlmResponse:
    return LlmResponse(
        model_version="gemini-scripted", content=types.Content(role="model", parts=[types.Part(text=text)])
    )


async def _two_turns(service: BaseSessionService, session_id: str, script: list[LlmResponse]) -> list[Any]:
    model = ScriptOfResponses(model="gemini-scripted", script=script)
    runner = Runner(
        agent=LlmAgent(name="orders", model=model, tools=[lookup_order, charge_card]),
        app_name=APP,
        session_service=service,
    )
    await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for question in QUESTIONS:
        message = types.Content(role="user", parts=[types.Part(text=question)])
        async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=message):
            pass
    return model.seen


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(calls_of_a_round, min_size=1, max_size=3))
def test_over_generated_runs_the_model_sees_what_the_plain_in_memory_service_gives_it(
    stack: Stack, publisher: ToolEventPublisher, ids: Callable[[str], str], rounds: list[Any]
) -> None:
    async def both() -> tuple[list[Any], list[Any]]:
        async with AsyncToolHistoryClient(stack.address, token=stack.token, tls=stack.tls or False) as history:
            service = ToolHistorySessionService(
                InMemorySessionService(),
                publisher=publisher,
                client=history,
                tenant_id=stack.tenant,
                channel=REASONING_KEPT,
            )
            decorated = await _two_turns(service, ids("adk-prop"), _script(rounds))
        plain = await _two_turns(InMemorySessionService(), "plain", _script(rounds))
        return decorated, plain

    decorated, plain = asyncio.run(both())
    assert _without_call_ids(decorated) == _without_call_ids(plain)


def refund(amount: int) -> dict[str, Any]:
    """Refunds an amount."""
    return {"refunded": amount}


async def _paused_and_confirmed(
    service: BaseSessionService,
    session_id: str,
    confirmed: bool,
    *,
    resumed_by: Callable[[], BaseSessionService] | None = None,
) -> list[Any]:
    """Turn 1 asks for a refund that needs the person's confirmation, resumes with it through ADK's own path (a
    function response to ``adk_request_confirmation``; by a new service from ``resumed_by``, as another process
    would); turn 2 asks again."""
    refund_call = types.Content(
        role="model",
        parts=[types.Part(function_call=types.FunctionCall(id="call-refund", name="refund", args={"amount": 5}))],
    )
    model = ScriptOfResponses(
        model="gemini-scripted",
        script=[
            LlmResponse(model_version="gemini-scripted", content=refund_call),
            _text_response("Refund handled."),
            _text_response("Nothing more to do."),
        ],
    )
    tool = FunctionTool(refund, require_confirmation=True)
    runner = Runner(agent=LlmAgent(name="orders", model=model, tools=[tool]), app_name=APP, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    asked = [e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=_said("Refund 5."))]
    (confirmation_id,) = [c.id for e in asked for c in e.get_function_calls() if c.name == "adk_request_confirmation"]
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=confirmation_id, name="adk_request_confirmation", response={"confirmed": confirmed}
                )
            )
        ],
    )
    if resumed_by is not None:
        runner = Runner(agent=runner.agent, app_name=APP, session_service=resumed_by())
    async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=answer):
        pass
    async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=_said("Anything else?")):
        pass
    return model.seen


def _said(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


@pytest.mark.parametrize("confirmed", [True, False], ids=["approved", "rejected"])
@pytest.mark.parametrize("one_service_object", [True, False], ids=["same service", "another service object"])
async def test_a_confirmation_pauses_and_resumes_through_adk_and_is_recorded_as_an_approval(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    confirmed: bool,
    one_service_object: bool,
) -> None:
    conversation = ids("adk-approval")
    inner = InMemorySessionService()

    def opened() -> ToolHistorySessionService:
        return ToolHistorySessionService(
            inner, publisher=publisher, client=aclient, tenant_id=stack.tenant, channel=REASONING_KEPT
        )

    decorated = await _paused_and_confirmed(
        opened(), conversation, confirmed, resumed_by=None if one_service_object else opened
    )
    plain = await _paused_and_confirmed(InMemorySessionService(), "plain", confirmed)

    assert _without_call_ids(decorated) == _without_call_ids(plain)
    (invocation,) = [
        i async for i in aclient.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation)
    ]
    assert invocation.tool_call_id == "call-refund"
    assert invocation.approval == (
        toolhistory_pb2.APPROVAL_STATUS_APPROVED if confirmed else toolhistory_pb2.APPROVAL_STATUS_DENIED
    )


def refund_failing(amount: int) -> dict[str, Any]:
    """Refunds; the payment service is down."""
    raise RuntimeError("payment service unavailable")


refund_failing.__name__ = "refund"


@pytest.mark.parametrize(
    ("channel", "round_replayed"),
    [("long-runs", True), (CHANNEL, False)],
    ids=["per_service_call keeps the finished round", "per_run drops the crashed run"],
)
async def test_a_run_that_crashed_after_a_round_is_replayed_by_the_channels_visibility(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    channel: str,
    round_replayed: bool,
) -> None:
    conversation = ids("adk-crash")
    service = ToolHistorySessionService(
        InMemorySessionService(), publisher=publisher, client=aclient, tenant_id=stack.tenant, channel=channel
    )
    lookup = types.Part(function_call=types.FunctionCall(id="call-a1", name="lookup_order", args={"order_id": "A-1"}))
    crash = types.Part(function_call=types.FunctionCall(id="call-refund", name="refund", args={"amount": 5}))
    model = ScriptOfResponses(
        model="gemini-scripted",
        script=[
            LlmResponse(model_version="gemini-scripted", content=types.Content(role="model", parts=[lookup])),
            LlmResponse(model_version="gemini-scripted", content=types.Content(role="model", parts=[crash])),
            _text_response("Where were we?"),
        ],
    )
    agent = LlmAgent(name="orders", model=model, tools=[lookup_order, refund_failing])
    runner = Runner(agent=agent, app_name=APP, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id=conversation)

    with pytest.raises(RuntimeError, match="payment service unavailable"):
        async for _event in runner.run_async(user_id=USER, session_id=conversation, new_message=_said("Refund A-1.")):
            pass
    async for _event in runner.run_async(user_id=USER, session_id=conversation, new_message=_said("Still there?")):
        pass

    after_crash = model.seen[-1]
    calls = [p["function_call"]["name"] for c in after_crash for p in c["parts"] if "function_call" in p]
    responses = [
        p["function_response"]["response"] for c in after_crash for p in c["parts"] if "function_response" in p
    ]
    if round_replayed:
        # The finished round, right after the question that started the run; the crashed call never ran: left out.
        assert calls == ["lookup_order"]
        assert responses == [{"order_id": "A-1", "status": "shipped"}]
        assert [c["role"] for c in after_crash] == ["user", "model", "user", "user"]
    else:
        assert calls == []
        assert responses == []


class _RunsAsked:
    """The real publisher, noting the runs the service opens (a rewind must open none)."""

    def __init__(self, publisher: ToolEventPublisher) -> None:
        self.publisher = publisher
        self.run_ids: list[str] = []

    def run(self, **scope: Any) -> Any:
        self.run_ids.append(scope["run_id"])
        return self.publisher.run(**scope)


async def _rewound(service: BaseSessionService, session_id: str, back_to_turn: int) -> list[dict[str, Any]]:
    """Both turns, a rewind to before turn ``back_to_turn``'s invocation (ADK's ``rewind_async``), then a third
    question: what the model was sent for it."""
    model = ScriptedGemini(model="gemini-scripted", seen=[])
    agent = LlmAgent(name="orders", model=model, tools=[lookup_order, charge_card])
    runner = Runner(agent=agent, app_name=APP, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id=session_id)
    for question in QUESTIONS:
        async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=_said(question)):
            pass
    session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
    assert session is not None
    [invocation] = [
        e.invocation_id
        for e in session.events
        if e.author == "user" and e.content and e.content.parts and e.content.parts[0].text == QUESTIONS[back_to_turn]
    ]
    await runner.rewind_async(user_id=USER, session_id=session_id, rewind_before_invocation_id=invocation)
    async for _event in runner.run_async(user_id=USER, session_id=session_id, new_message=_said("Where is A-1?")):
        pass
    return model.seen[-1]


@pytest.mark.parametrize("back_to_turn", [1, 0], ids=["before the second turn", "before the first turn"])
async def test_a_rewind_gives_the_model_what_the_plain_in_memory_service_gives_it(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    back_to_turn: int,
) -> None:
    runs = _RunsAsked(publisher)
    service = ToolHistorySessionService(
        InMemorySessionService(),
        publisher=runs,  # type: ignore[arg-type]
        client=aclient,
        tenant_id=stack.tenant,
        channel=REASONING_KEPT,
    )

    decorated = await _rewound(service, ids("adk-rewind"), back_to_turn)
    plain = await _rewound(InMemorySessionService(), "plain", back_to_turn)

    assert _without_call_ids([decorated]) == _without_call_ids([plain])
    sent_calls = [p["function_call"]["name"] for c in decorated for p in c["parts"] if "function_call" in p]
    assert sent_calls == (["lookup_order", "lookup_order", "charge_card"] if back_to_turn == 1 else [])
    # The rewind's own event (a user event without content) starts no run: the three turns are the only runs.
    assert len(runs.run_ids) == 3


@pytest.mark.parametrize("erase_on_delete", [False, True], ids=["audit keeps the calls", "erase_on_delete"])
async def test_deleting_a_session_erases_its_recorded_calls_only_when_asked(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    erase_on_delete: bool,
) -> None:
    conversation = ids("adk-delete")
    service = ToolHistorySessionService(
        InMemorySessionService(),
        publisher=publisher,
        client=aclient,
        tenant_id=stack.tenant,
        channel=CHANNEL,
        erase_on_delete=erase_on_delete,
    )
    await _converse(service, conversation)

    await service.delete_session(app_name=APP, user_id=USER, session_id=conversation)

    assert await service.get_session(app_name=APP, user_id=USER, session_id=conversation) is None
    kept = [i async for i in aclient.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation)]
    assert len(kept) == (0 if erase_on_delete else 3)


async def test_over_adks_database_service_another_process_sees_the_first_turns_calls_as_with_the_plain_one(
    stack: Stack,
    publisher: ToolEventPublisher,
    aclient: AsyncToolHistoryClient,
    ids: Callable[[str], str],
    tmp_path: Path,
) -> None:
    """``inner`` is ADK's ``DatabaseSessionService`` (SQLite on disk); the second turn runs on a new service object
    over the same database, as another process would."""

    def decorated() -> ToolHistorySessionService:
        return ToolHistorySessionService(
            DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'decorated.db'}"),
            publisher=publisher,
            client=aclient,
            tenant_id=stack.tenant,
            channel=REASONING_KEPT,
        )

    def plain() -> DatabaseSessionService:
        return DatabaseSessionService(f"sqlite+aiosqlite:///{tmp_path / 'plain.db'}")

    with_toolhistory = await _converse(decorated(), ids("adk-db"), next_turns_by=decorated)
    without = await _converse(plain(), "plain", next_turns_by=plain)

    assert _without_call_ids(with_toolhistory) == _without_call_ids(without)
    second_turn = with_toolhistory[-1]
    sent_calls = [p["function_call"]["name"] for c in second_turn for p in c["parts"] if "function_call" in p]
    assert sent_calls == ["lookup_order", "lookup_order", "charge_card"]
