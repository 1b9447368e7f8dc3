"""The publisher's persist hook: redaction before publishing, as the TypeScript client does it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory.errors import InvalidToolEventError, PersistHookError
from toolhistory.events import JsonObject, JsonValue, PublishedEvent, RunScope, ToolResult
from toolhistory.persist import PersistAnswer, PersistContext, PersistOption
from toolhistory.publisher import PendingEvent, PreparedEvent, RunPublisher, ToolEventPublisher, prepare_events
from toolhistory.validation import event_problems

if TYPE_CHECKING:
    from collections.abc import Sequence

NOW = datetime(2026, 11, 2, 10, 15, 30, 123000, tzinfo=timezone.utc)
SCOPE = RunScope(tenant_id="acme", conversation_id="conv-1", channel="web", run_id="run-7")
CARD: JsonObject = {"customer": "Ann", "card": {"number": "4111111111111111", "cvc": "123"}}


class Recorder:
    """A RunPublisher's send step: prepares the events as the publisher does and keeps what it would send."""

    def __init__(self, persist: PersistOption | None, max_result_chars: int | None = None) -> None:
        self.persist = persist
        self.max_result_chars = max_result_chars
        self.sent: list[PreparedEvent] = []

    def __call__(self, events: Sequence[PendingEvent]) -> list[PublishedEvent]:
        prepared = prepare_events(SCOPE, events, max_result_chars=self.max_result_chars, persist=self.persist, now=NOW)
        offset = len(self.sent)
        self.sent.extend(prepared)
        return [PublishedEvent(event.event_id, event.type, 0, offset + index) for index, event in enumerate(prepared)]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(event.value) for event in self.sent]


def run_with(persist: PersistOption | None, max_result_chars: int | None = None) -> tuple[RunPublisher, Recorder]:
    recorder = Recorder(persist, max_result_chars)
    return RunPublisher(SCOPE, recorder), recorder


def without_card(payload: JsonValue, _context: PersistContext) -> JsonValue:
    assert isinstance(payload, dict)
    return {**payload, "card": "[hidden]"}


def json_size(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def test_for_all_tools_it_is_given_arguments_and_result_with_their_tool() -> None:
    seen: list[tuple[JsonValue, PersistContext]] = []

    def hook(payload: JsonValue, context: PersistContext) -> JsonValue:
        seen.append((payload, context))
        return without_card(payload, context)

    run, recorder = run_with(hook)
    run.tool_call(round_index=0, sequence_index=0, tool_call_id="call_1", tool_name="charge", arguments=CARD)
    run.tool_result(round_index=0, sequence_index=0, tool_call_id="call_1", result=CARD)
    assert seen == [(CARD, PersistContext("arguments", "charge")), (CARD, PersistContext("result", "charge"))]
    call, result = recorder.events()
    assert call["arguments"] == {"customer": "Ann", "card": "[hidden]"}
    assert result["result"] == {"customer": "Ann", "card": "[hidden]"}
    for event in (call, result):
        assert event["producerRedacted"] is True
        assert event["redaction"] == {"persist": "full"}
    assert all("4111" not in event.value for event in recorder.sent)


def test_per_tool_only_the_named_tools_hook_runs() -> None:
    run, recorder = run_with({"charge": lambda _payload, _context: "metadata"})
    run.tool_call(round_index=0, sequence_index=0, tool_call_id="call_1", tool_name="charge", arguments=CARD)
    run.tool_call(round_index=0, sequence_index=1, tool_call_id="call_2", tool_name="lookup", arguments={"q": "x"})
    charged, looked_up = recorder.events()
    assert charged["arguments"] == {}
    assert charged["originalBytes"] == json_size(CARD)
    assert charged["redaction"] == {"persist": "metadata"}
    assert "producerRedacted" not in looked_up
    assert "redaction" not in looked_up


def test_metadata_publishes_the_size_and_none_publishes_neither() -> None:
    run, recorder = run_with(
        {"sized": lambda _payload, _context: "metadata", "hidden": lambda _payload, _context: None}
    )
    run.tool_call(round_index=0, sequence_index=0, tool_call_id="c", tool_name="sized", arguments=CARD)
    run.tool_result(round_index=0, sequence_index=0, tool_call_id="c", result="secret text")
    run.tool_call(round_index=0, sequence_index=1, tool_call_id="d", tool_name="hidden", arguments=CARD)
    run.tool_result(round_index=0, sequence_index=1, tool_call_id="d", result=CARD)
    sized_call, sized_result, hidden_call, hidden_result = recorder.events()
    assert sized_result["result"] is None
    assert sized_result["originalBytes"] == json_size("secret text")
    assert hidden_call["arguments"] == {}
    assert hidden_call["redaction"] == {"persist": "none"}
    assert hidden_result["result"] is None
    assert hidden_result["redaction"] == {"persist": "none"}
    assert "originalBytes" not in hidden_call
    assert "originalBytes" not in hidden_result
    assert sized_call["originalBytes"] == json_size(CARD)
    for event in recorder.events():
        assert event_problems(event) == []


def test_a_hook_that_raises_fails_the_publication_naming_tool_and_kind_and_sends_nothing() -> None:
    def hook(payload: JsonValue, context: PersistContext) -> JsonValue:
        if context.kind == "result":
            raise RuntimeError("vault unreachable for 4111111111111111")
        return payload

    run, recorder = run_with({"charge": hook})
    with pytest.raises(
        PersistHookError, match=r"^persist hook of charge failed on its result; nothing was published$"
    ) as raised:
        run.tool_results(
            [
                ToolResult(0, 0, "a", "fine", tool_name="lookup"),
                ToolResult(0, 1, "b", CARD, tool_name="charge"),
            ]
        )
    assert (raised.value.tool_name, raised.value.kind) == ("charge", "result")
    assert isinstance(raised.value.__cause__, RuntimeError)
    assert recorder.sent == []


def test_an_answer_that_is_no_payload_of_its_kind_fails_the_publication() -> None:
    run, recorder = run_with({"charge": lambda _payload, _context: ["not", "an", "object"]})
    with pytest.raises(InvalidToolEventError, match="persist hook of charge \\(arguments\\): must return arguments"):
        run.tool_call(round_index=0, sequence_index=0, tool_call_id="c", tool_name="charge", arguments=CARD)
    assert recorder.sent == []


def test_the_hook_is_given_a_copy() -> None:
    arguments: JsonObject = {"token": "tok-1", "q": "x"}

    def drop_token(payload: JsonValue, _context: PersistContext) -> JsonValue:
        assert isinstance(payload, dict)
        del payload["token"]
        return payload

    run, recorder = run_with(drop_token)
    run.tool_call(round_index=0, sequence_index=0, tool_call_id="c", tool_name="search", arguments=arguments)
    assert arguments == {"token": "tok-1", "q": "x"}
    assert recorder.events()[0]["arguments"] == {"q": "x"}


def test_a_result_whose_tool_is_unknown_is_refused_rather_than_published_unhooked() -> None:
    run, recorder = run_with({"charge": lambda _payload, _context: None})
    with pytest.raises(InvalidToolEventError, match="toolName is required with a result"):
        run.tool_result(round_index=0, sequence_index=0, tool_call_id="c", result=CARD)
    assert recorder.sent == []
    run.tool_result(round_index=0, sequence_index=0, tool_call_id="c", result=CARD, tool_name="charge")
    assert recorder.events()[0]["result"] is None


def test_it_runs_before_the_limits_which_cut_what_it_returned() -> None:
    def keep_little(payload: JsonValue, _context: PersistContext) -> JsonValue:
        assert isinstance(payload, dict)
        return {"kept": payload["kept"], "note": "x" * 100}

    run, recorder = run_with(keep_little, max_result_chars=30)
    run.tool_result(
        round_index=0, sequence_index=0, tool_call_id="c", result={"kept": "yes", "secret": "tok-1" * 50}, tool_name="f"
    )
    [event] = recorder.events()
    returned = json.dumps({"kept": "yes", "note": "x" * 100}, separators=(",", ":"))
    assert event["result"].startswith(returned[:30])
    assert event["originalBytes"] == len(returned)
    assert "tok-1" not in recorder.sent[0].value


def test_a_withheld_result_is_left_alone_whatever_the_result_limit() -> None:
    run, recorder = run_with(lambda _payload, _context: "metadata", max_result_chars=1)
    run.tool_result(round_index=0, sequence_index=0, tool_call_id="c", result="a long text", tool_name="f")
    assert recorder.events()[0]["result"] is None
    assert recorder.events()[0]["originalBytes"] == 13


def test_the_option_is_checked_when_the_publisher_is_made() -> None:
    with pytest.raises(ValueError, match="persist: must be a callable"):
        ToolEventPublisher(brokers="127.0.0.1:1", persist="metadata")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"persist\.charge: must be a callable"):
        ToolEventPublisher(brokers="127.0.0.1:1", persist={"charge": None})  # type: ignore[dict-item]


def test_same_bytes_as_the_typescript_client_for_a_metadata_call() -> None:
    run, recorder = run_with(lambda _payload, _context: "metadata")
    run.tool_call(round_index=0, sequence_index=0, tool_call_id="c", tool_name="t", arguments={"a": "é"})
    assert recorder.sent[0].value.endswith(
        '"roundIndex":0,"sequenceIndex":0,"toolCallId":"c","toolName":"t","arguments":{},'
        '"originalBytes":10,"producerRedacted":true,"redaction":{"persist":"metadata"}}'
    )


SECRET = "S3CRET-VALUE"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
).filter(lambda value: SECRET not in json.dumps(value))
choices = st.sampled_from(["keep-redacted", "metadata", "none"])


@given(
    arguments=st.dictionaries(st.text(max_size=5), json_values, max_size=4),
    result=json_values,
    for_arguments=choices,
    for_result=choices,
    max_result_chars=st.integers(1, 200),
)
def test_nothing_the_hook_removed_is_published_and_every_event_meets_the_contract(
    arguments: JsonObject, result: JsonValue, for_arguments: str, for_result: str, max_result_chars: int
) -> None:
    def respond(choice: str, payload: JsonValue) -> PersistAnswer:
        if choice == "metadata":
            return "metadata"
        if choice == "none":
            return None
        assert isinstance(payload, dict)
        return {key: value for key, value in payload.items() if key != "secret"}

    def hook(payload: JsonValue, context: PersistContext) -> PersistAnswer:
        return respond(for_arguments if context.kind == "arguments" else for_result, payload)

    run, recorder = run_with(hook, max_result_chars=max_result_chars)
    run.tool_call(
        round_index=0, sequence_index=0, tool_call_id="c", tool_name="t", arguments={**arguments, "secret": SECRET}
    )
    run.tool_result(round_index=0, sequence_index=0, tool_call_id="c", result={"value": result, "secret": SECRET})
    for prepared in recorder.sent:
        assert SECRET not in prepared.value
        assert event_problems(json.loads(prepared.value)) == []
