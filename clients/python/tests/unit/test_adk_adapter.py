"""The Google ADK session service with ADK's own Runner and InMemorySessionService: what it records, and that as a
store it behaves as the service it decorates. Replay comes from a real gRPC server with canned answers."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService, InMemorySessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.tools import FunctionTool
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field
from recording_publisher import RecordingPublisher

from toolhistory.adk import ToolHistorySessionService, events_of_turn, result_of
from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.v1 import toolhistory_pb2

from toolhistory_peer import CannedToolHistory, serving

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence

    from google.adk.models.llm_request import LlmRequest

APP, USER = "orders-app", "user-1"


@pytest.fixture
def canned() -> CannedToolHistory:
    return CannedToolHistory()


@pytest.fixture
async def client(canned: CannedToolHistory) -> AsyncIterator[AsyncToolHistoryClient]:
    with serving(canned) as address:
        async with AsyncToolHistoryClient(address) as history:
            yield history


def _service(inner: BaseSessionService, publisher: RecordingPublisher, client: AsyncToolHistoryClient) -> Any:
    return ToolHistorySessionService(
        inner,
        publisher=publisher,  # type: ignore[arg-type]
        client=client,
        tenant_id="acme",
        channel="web",
    )


# -- recording: a run of ADK's Runner ----------------------------------------------------------------------------


class ScriptedGemini(BaseLlm):
    """Answers from a script, one response per model call."""

    script: list[LlmResponse] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield self.script.pop(0)


def lookup_order(order_id: str) -> dict[str, Any]:
    """Looks an order up."""
    return {"order_id": order_id, "status": "shipped"}


def charge_card(amount: int) -> dict[str, Any]:
    """Charges the card."""
    return {"error": f"card declined for {amount}"}


def refund(amount: int) -> dict[str, Any]:
    """Refunds; the payment service is down."""
    raise RuntimeError("payment service unavailable")


def _calls_response() -> LlmResponse:
    return LlmResponse(
        model_version="gemini-scripted",
        usage_metadata=types.GenerateContentResponseUsageMetadata(prompt_token_count=100, candidates_token_count=20),
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="Orders, then the card.", thought=True),
                types.Part(
                    function_call=types.FunctionCall(id="call-a1", name="lookup_order", args={"order_id": "A-1"}),
                    thought_signature=b"signature-a1",
                ),
                types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order_id": "B-2"})),
                types.Part(function_call=types.FunctionCall(id="call-charge", name="charge_card", args={"amount": 30})),
            ],
        ),
    )


def _text(text: str) -> LlmResponse:
    return LlmResponse(
        model_version="gemini-scripted", content=types.Content(role="model", parts=[types.Part(text=text)])
    )


async def _ask(runner: Runner, session_id: str, question: str) -> list[Event]:
    message = types.Content(role="user", parts=[types.Part(text=question)])
    return [e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=message)]


async def test_a_run_is_recorded_round_by_round_with_its_signatures_and_its_answer(
    client: AsyncToolHistoryClient,
) -> None:
    publisher = RecordingPublisher()
    inner = InMemorySessionService()
    service = _service(inner, publisher, client)
    model = ScriptedGemini(model="gemini-scripted", script=[_calls_response(), _text("Shipped; card declined.")])
    runner = Runner(
        agent=LlmAgent(name="orders", model=model, tools=[lookup_order, charge_card]),
        app_name=APP,
        session_service=service,
    )
    await service.create_session(app_name=APP, user_id=USER, session_id="conv-1")

    yielded = await _ask(runner, "conv-1", "Where are A-1 and B-2? Charge me 30.")

    events = publisher.events()
    assert [e["type"] for e in events] == [
        "ModelResponseReceived",
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolResultReceived",
        "ToolResultReceived",
        "RunCompleted",
    ]
    invocation = yielded[0].invocation_id
    assert {e["runId"] for e in events} == {invocation}
    assert {e["conversationId"] for e in events} == {"conv-1"}
    response = events[0]
    assert response["provider"] == "google"
    assert response["callSignatures"] == {"call-a1": "c2lnbmF0dXJlLWEx"}
    assert response["reasoning"] == [{"text": "Orders, then the card.", "thought": True}]
    calls = events[1:4]
    assert [(c["roundIndex"], c["sequenceIndex"], c["toolName"]) for c in calls] == [
        (0, 0, "lookup_order"),
        (0, 1, "lookup_order"),
        (0, 2, "charge_card"),
    ]
    assert calls[1]["toolCallId"].startswith("adk-")  # ADK's own id for a call the model gave none
    results = events[4:7]
    assert [(r["isError"], r["result"]) for r in results] == [
        (False, {"order_id": "A-1", "status": "shipped"}),
        (False, {"order_id": "B-2", "status": "shipped"}),
        (True, "card declined for 30"),
    ]
    kept = await inner.get_session(app_name=APP, user_id=USER, session_id="conv-1")
    assert kept is not None
    question, answer = kept.events  # the calls are toolhistory's
    assert events[-1]["assistantMessageId"] == answer.id
    assert events[-1]["finishReason"] == "stop"
    assert {e.get("userMessageId") for e in events} == {question.id}


async def test_a_run_that_never_answered_ends_as_failed_when_the_next_one_starts(
    client: AsyncToolHistoryClient,
) -> None:
    publisher = RecordingPublisher()
    service = _service(InMemorySessionService(), publisher, client)
    refund_call = LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id="c1", name="refund", args={"amount": 5}))],
        )
    )
    model = ScriptedGemini(model="gemini-scripted", script=[refund_call, _text("Hello again.")])
    runner = Runner(agent=LlmAgent(name="orders", model=model, tools=[refund]), app_name=APP, session_service=service)
    await service.create_session(app_name=APP, user_id=USER, session_id="conv-2")

    with pytest.raises(RuntimeError, match="payment service unavailable"):
        await _ask(runner, "conv-2", "Refund me 5.")
    await _ask(runner, "conv-2", "Hello?")

    events = publisher.events()
    assert [e["type"] for e in events] == ["ToolCallRequested", "RunFailed", "RunCompleted"]
    assert events[1]["runId"] == events[0]["runId"] != events[2]["runId"]
    assert events[1]["error"]["code"] == "interrupted"


def refund_ok(amount: int) -> dict[str, Any]:
    """Refunds an amount."""
    return {"refunded": amount}


refund_ok.__name__ = "refund"


async def test_a_confirmation_is_an_approval_and_adks_resume_finds_the_waiting_call(
    canned: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    publisher = RecordingPublisher()
    service = _service(InMemorySessionService(), publisher, client)
    refund_call = LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(id="c1", name="refund", args={"amount": 5}))],
        )
    )
    model = ScriptedGemini(model="gemini-scripted", script=[refund_call, _text("Refunded.")])
    runner = Runner(
        agent=LlmAgent(name="orders", model=model, tools=[FunctionTool(refund_ok, require_confirmation=True)]),
        app_name=APP,
        session_service=service,
    )
    await service.create_session(app_name=APP, user_id=USER, session_id="conv-3")

    asked = await _ask(runner, "conv-3", "Refund me 5.")
    (confirmation,) = [c for e in asked for c in e.get_function_calls() if c.name == "adk_request_confirmation"]
    # The service now lists the call as waiting (what it answers once the request above is recorded).
    canned.replay = toolhistory_pb2.GetReplayHistoryResponse(
        pending_approvals=[
            toolhistory_pb2.PendingApproval(
                tool_call_id="c1", tool_name="refund", arguments_json='{"amount": 5}', run_id=asked[0].invocation_id
            )
        ]
    )
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=confirmation.id, name="adk_request_confirmation", response={"confirmed": True}
                )
            )
        ],
    )
    resumed = [e async for e in runner.run_async(user_id=USER, session_id="conv-3", new_message=answer)]

    assert resumed[-1].content is not None
    assert (resumed[-1].content.parts or [])[0].text == "Refunded."
    events = publisher.events()
    assert [e["type"] for e in events] == [
        "ToolCallRequested",
        "ToolApprovalRequested",
        "ToolApprovalDecided",
        "ToolResultReceived",
        "RunCompleted",
    ]
    assert "approve or reject" in events[1]["reason"]
    assert events[2]["approved"] is True
    assert events[3]["result"] == {"refunded": 5}
    assert {e["runId"] for e in events} == {asked[0].invocation_id}


# -- the store: the same behaviours as the service it decorates ----------------------------------------------------


async def _session_of(service: BaseSessionService, session_id: str, texts: Sequence[str], start: float) -> None:
    session = await service.create_session(app_name=APP, user_id=USER, session_id=session_id, state={"k": 1})
    for index, text in enumerate(texts):
        author = "user" if index % 2 == 0 else "orders"
        role = "user" if author == "user" else "model"
        event = Event(
            id=f"{session_id}-e{index}",
            invocation_id=f"{session_id}-inv{index // 2}",
            author=author,
            timestamp=start + index,
            content=types.Content(role=role, parts=[types.Part(text=text)]),
        )
        await service.append_event(session, event)


async def _events(service: BaseSessionService, config: GetSessionConfig | None = None) -> Any:
    session = await service.get_session(app_name=APP, user_id=USER, session_id="s1", config=config)
    return None if session is None else ([e.id for e in session.events], session.state)


async def _listed(service: BaseSessionService) -> Any:
    listed = await service.list_sessions(app_name=APP, user_id=USER)
    return sorted(s.id for s in listed.sessions)


async def _deleted(service: BaseSessionService) -> Any:
    await service.delete_session(app_name=APP, user_id=USER, session_id="s1")
    return await service.get_session(app_name=APP, user_id=USER, session_id="s1"), await _listed(service)


async def _missing(service: BaseSessionService) -> Any:
    return await service.get_session(app_name=APP, user_id=USER, session_id="no-such-session")


STORE_BEHAVIOURS: dict[str, Callable[[BaseSessionService], Awaitable[Any]]] = {
    "events in the order appended, with the state": _events,
    "the most recent events": lambda s: _events(s, GetSessionConfig(num_recent_events=3)),
    "no events for num_recent_events=0": lambda s: _events(s, GetSessionConfig(num_recent_events=0)),
    "the events from a time on": lambda s: _events(s, GetSessionConfig(after_timestamp=1002.0)),
    "both filters": lambda s: _events(s, GetSessionConfig(num_recent_events=2, after_timestamp=1000.0)),
    "the user's sessions": _listed,
    "deleted: gone from get and list": _deleted,
    "a missing session is None": _missing,
}


@pytest.mark.parametrize("behaviour", list(STORE_BEHAVIOURS), ids=list(STORE_BEHAVIOURS))
async def test_as_a_store_it_behaves_as_the_service_it_decorates(
    behaviour: str, client: AsyncToolHistoryClient
) -> None:
    answers = []
    for service in (InMemorySessionService(), _service(InMemorySessionService(), RecordingPublisher(), client)):
        await _session_of(service, "s1", ["hi", "hello", "where is A-1?", "shipped", "thanks"], start=1000.0)
        await _session_of(service, "s2", ["other"], start=2000.0)
        answers.append(await STORE_BEHAVIOURS[behaviour](service))
    plain, decorated = answers
    assert decorated == plain


async def test_get_session_puts_each_replayed_turn_before_its_answer(
    canned: CannedToolHistory, client: AsyncToolHistoryClient
) -> None:
    service = _service(InMemorySessionService(), RecordingPublisher(), client)
    await _session_of(service, "s1", ["where is A-1?", "shipped", "thanks"], start=1000.0)
    contents = [
        {
            "role": "model",
            "parts": [{"functionCall": {"id": "c1", "name": "lookup_order", "args": {"order_id": "A-1"}}}],
        },
        {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "lookup_order", "response": {"s": 1}}}]},
    ]
    canned.replay = toolhistory_pb2.GetReplayHistoryResponse(
        turns=[
            toolhistory_pb2.Turn(
                run_id="s1-inv0",
                assistant_message_id="s1-e1",
                after_message_id="s1-e0",
                status=toolhistory_pb2.RUN_STATUS_COMPLETED,
                messages_json=json.dumps(contents),
            )
        ]
    )

    session = await service.get_session(app_name=APP, user_id=USER, session_id="s1")

    assert session is not None
    assert [(e.id, e.author) for e in session.events] == [
        ("s1-e0", "user"),
        ("toolhistory-s1-inv0-0", "orders"),
        ("toolhistory-s1-inv0-1", "orders"),
        ("s1-e1", "orders"),
        ("s1-e2", "user"),
    ]
    (request,) = canned.received("GetReplayHistory")
    assert request.request.conversation_id == "s1"
    assert list(request.request.branch_message_ids) == ["s1-e0", "s1-e1", "s1-e2"]
    assert request.request.format == toolhistory_pb2.HISTORY_FORMAT_GEMINI


# -- pure: a response recorded and replayed is the same response -------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=10)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
responses = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


def _gemini_replay_of(result: Any, is_error: bool) -> dict[str, Any]:
    """The gemini format's function response for a recorded result (toolhistory.formats: an object as it is, an
    error as {"error": ...}, any other value as {"output": ...})."""
    if is_error:
        return {"error": result}
    return result if isinstance(result, dict) else {"output": result}


@given(responses)
def test_a_recorded_response_replays_as_itself(response: dict[str, Any]) -> None:
    recorded, is_error = result_of(types.FunctionResponse(name="t", response=response))
    assert _gemini_replay_of(recorded, is_error) == response


@pytest.mark.parametrize(
    ("response", "recorded"),
    [
        ({"error": "declined"}, ("declined", True)),
        ({"error": "declined", "code": 7}, ({"error": "declined", "code": 7}, False)),
        ({"error": {"code": 7}}, ({"error": {"code": 7}}, False)),
        ({"result": "ok"}, ({"result": "ok"}, False)),
        ({}, ({}, False)),
    ],
)
def test_an_error_is_a_response_that_is_only_an_error_text(response: dict[str, Any], recorded: Any) -> None:
    assert result_of(types.FunctionResponse(name="t", response=response)) == recorded


def test_replayed_contents_become_the_agents_events_with_their_signatures() -> None:
    (event,) = events_of_turn(
        "run-1",
        [
            {
                "role": "model",
                "parts": [{"functionCall": {"id": "c", "name": "t", "args": {}}, "thoughtSignature": "c2ln"}],
            }
        ],
        author="orders",
        timestamp=5.0,
    )
    assert event.content is not None
    (part,) = event.content.parts or []
    assert part.thought_signature == b"sig"
    assert (event.author, event.invocation_id, event.timestamp) == ("orders", "run-1", 5.0)


def test_contents_of_another_format_are_refused_naming_the_run() -> None:
    with pytest.raises(ValueError, match=r"run 'run-1' is not a Gemini content.*format=\"gemini\""):
        events_of_turn("run-1", [{"role": "assistant", "content": "hi"}], author="orders", timestamp=0.0)
