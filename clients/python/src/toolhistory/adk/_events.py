"""ADK events as the recording core's steps, and replayed Gemini contents as ADK events (pure: no I/O)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, cast

from google.adk.events import Event
from google.adk.tools.tool_confirmation import ToolConfirmation
from google.genai import types

from toolhistory._recording import AskedCall, RecordedCall, RecordedResult, ResponseReasoning
from toolhistory.events import JsonObject, JsonValue, TokenUsage
from toolhistory.limits import MAX_ID_LENGTH, MAX_JSON_DEPTH, json_depth, token_count

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolhistory.v1 import toolhistory_pb2

REPLAY_FORMAT: Final = "gemini"
"""The history format the session service reads: Gemini contents, ADK's own."""

PROVIDER = "google"
"""The provider a Gemini response's reasoning goes back to (the ``gemini`` format's)."""

CONFIRMATION_FUNCTION = "adk_request_confirmation"
"""ADK's function call that asks the person to confirm a tool call (``FunctionTool(..., require_confirmation=True)``,
``tool_context.request_confirmation``)."""

CONTROL_FUNCTIONS = frozenset({CONFIRMATION_FUNCTION, "adk_request_credential", "adk_request_input"})
"""ADK's own function calls (asking the person for a confirmation, credentials or input): control events the inner
service keeps, not tool use."""

RECORDED_MARK = "toolhistory_recorded"
"""``custom_metadata`` key of what the inner service keeps of a recorded event that also changed state or artifacts:
the event without its content (its calls or results are toolhistory's), so the state change persists."""


def _parts(event: Event) -> list[types.Part]:
    return list(event.content.parts or []) if event.content is not None else []


def is_tool_event(event: Event) -> bool:
    """Whether the event holds function calls or responses of tools (ADK's control functions excluded)."""
    calls = [p.function_call for p in _parts(event) if p.function_call is not None]
    responses = [p.function_response for p in _parts(event) if p.function_response is not None]
    named = [c.name for c in calls] + [r.name for r in responses]
    return bool(named) and any(name not in CONTROL_FUNCTIONS for name in named)


def asked_calls(event: Event) -> list[AskedCall]:
    """The event's function calls, in the model's order."""
    return [
        AskedCall(call.id or "", call.name or "", arguments_of(call.args))
        for call in (p.function_call for p in _parts(event))
        if call is not None
    ]


def arguments_of(args: dict[str, Any] | None) -> JsonObject:
    """A call's arguments as a JSON object; one nested past the contract's depth as ``{"_raw": its JSON}``."""
    value = cast("JsonObject", json.loads(json.dumps(args or {}, default=str)))
    return value if json_depth(value) <= MAX_JSON_DEPTH else {"_raw": json.dumps(value)}


def responses_of(event: Event) -> list[types.FunctionResponse]:
    """The event's function responses, in order."""
    return [p.function_response for p in _parts(event) if p.function_response is not None]


def result_of(response: types.FunctionResponse) -> tuple[JsonValue, bool]:
    """A response as recorded, and whether it is an error, so that replay gives back the same response.

    ADK answers a call with a JSON object (a tool's non-object value wrapped as ``{"result": ...}``); replay in the
    ``gemini`` format gives a JSON object back as it is and an error as ``{"error": text}``: an object that is only
    ``{"error": text}`` is recorded as the error ``text``, any other as the object.
    """
    body = cast("dict[str, Any]", json.loads(json.dumps(response.response or {}, default=str)))
    if set(body) == {"error"} and isinstance(body["error"], str):
        return body["error"], True
    return cast("JsonValue", body), False


def recorded_result(call: RecordedCall, response: types.FunctionResponse) -> RecordedResult:
    result, is_error = result_of(response)
    return RecordedResult(call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, result, is_error)


def text_of(event: Event) -> str | None:
    """The response's text (thoughts left out), or ``None`` when it has none."""
    texts = [p.text for p in _parts(event) if p.text and not p.thought]
    return "".join(texts) if texts else None


def reasoning_of(event: Event) -> ResponseReasoning | None:
    """The reasoning state Gemini handed back with the calls: its thought parts, and each call's thought signature
    (base64, as the Gemini API's JSON carries it). ``None`` when there is none, or the model is not named (the
    reasoning goes back to the model it came from)."""
    parts = _parts(event)
    thoughts = [
        cast("JsonObject", p.model_dump(mode="json", by_alias=True, exclude_none=True)) for p in parts if p.thought
    ]
    signatures = {
        p.function_call.id: base64.b64encode(p.thought_signature).decode("ascii")
        for p in parts
        if p.function_call is not None and p.function_call.id and p.thought_signature
    }
    if not (thoughts or signatures) or not event.model_version:
        return None
    return ResponseReasoning(PROVIDER, event.model_version[:MAX_ID_LENGTH], tuple(thoughts), signatures)


def usage_of(event: Event) -> TokenUsage | None:
    """The tokens of the model response the event is, when ADK says them."""
    usage = event.usage_metadata
    if usage is None:
        return None
    model = event.model_version[:MAX_ID_LENGTH] if event.model_version else None
    return TokenUsage(token_count(usage.prompt_token_count or 0), token_count(usage.candidates_token_count or 0), model)


def is_answer(event: Event) -> bool:
    """Whether the event is the run's answer: a final response of the agent with content (not a tool event)."""
    return (
        event.author != "user" and event.content is not None and event.is_final_response() and not is_tool_event(event)
    )


@dataclass(frozen=True)
class ReplayedEvents:
    """One replayed turn as ADK events, as ``toolhistory.splice`` places turns."""

    assistant_message_id: str
    after_message_id: str
    messages: list[Event] = field(default_factory=list)


def events_of_turn(
    run_id: str, contents: Sequence[Any], *, author: str, timestamp: float, branch: str | None = None
) -> list[Event]:
    """A turn's replayed Gemini contents (``model`` contents of calls, ``user`` contents of responses) as the events
    ADK made of them: the agent's, with the run's invocation id (each its own event id, derived from the run)."""
    events: list[Event] = []
    for index, content in enumerate(contents):
        if not isinstance(content, dict) or content.get("role") not in ("model", "user"):
            raise ValueError(
                f"replayed content {index} of run {run_id!r} is not a Gemini content: {content!r} "
                f'(fetch the history with format="{REPLAY_FORMAT}")'
            )
        events.append(
            Event(
                id=f"toolhistory-{run_id}-{index}",
                invocation_id=run_id,
                author=author,
                branch=branch,
                timestamp=timestamp,
                content=types.Content.model_validate_json(json.dumps(content)),
            )
        )
    return events


def confirmation_requests(event: Event) -> dict[str, str]:
    """ADK's requests to confirm a call in the event: the request's call id to the id of the call it asks about."""
    requests: dict[str, str] = {}
    for part in _parts(event):
        call = part.function_call
        if call is None or call.name != CONFIRMATION_FUNCTION or not call.id:
            continue
        original = (call.args or {}).get("originalFunctionCall")
        if isinstance(original, dict) and isinstance(original.get("id"), str):
            requests[call.id] = original["id"]
    return requests


def confirmation_answers(event: Event) -> dict[str, bool]:
    """The person's answers to confirmation requests in the event: the request's call id to whether it is confirmed
    (ADK's answer carries no reason)."""
    answers: dict[str, bool] = {}
    for response in responses_of(event):
        if response.name != CONFIRMATION_FUNCTION or not response.id:
            continue
        confirmation = ToolConfirmation.from_response_dict(response.response or {})
        answers[response.id] = confirmation.confirmed
    return answers


def pending_call_event(pending: toolhistory_pb2.PendingApproval, confirmation_id: str, request: Event) -> Event:
    """A call waiting for approval as the model's function call event, just before ADK's request to confirm it."""
    arguments = json.loads(pending.arguments_json) if pending.arguments_json else {}
    return Event(
        id=f"toolhistory-pending-{confirmation_id}",
        invocation_id=request.invocation_id,
        author=request.author,
        branch=request.branch,
        timestamp=request.timestamp,
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(id=pending.tool_call_id, name=pending.tool_name, args=arguments)
                )
            ],
        ),
    )
