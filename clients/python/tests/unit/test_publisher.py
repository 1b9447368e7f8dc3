"""The publisher's options, and the events a RunPublisher builds, up to the send step (no broker)."""

from __future__ import annotations

import json
import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolhistory.consistency import kafka_consistency_token, last_consistency_token
from toolhistory.errors import InvalidToolEventError, PublishError
from toolhistory.event_ids import derive_event_id
from toolhistory.events import (
    MaxResultChars,
    MaxResultCharsByTool,
    PublishedEvent,
    RunFailure,
    RunScope,
    TokenUsage,
    ToolCall,
    ToolResult,
)
from toolhistory.publisher import (
    DEFAULT_TOOL_EVENTS_TOPIC,
    PUBLISHED_SCHEMA_VERSION,
    PendingEvent,
    PreparedEvent,
    RunPublisher,
    ToolEventPublisher,
    cited_sources_from,
    prepare_events,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

NOW = datetime(2026, 11, 2, 10, 15, 30, 123456, tzinfo=timezone.utc)
SCOPE = RunScope(tenant_id="acme", conversation_id="conv-42", channel="support", run_id="run-7")
# Nothing listens there: the producer is created, and a send to it can only time out.
NO_BROKER = "127.0.0.1:1"


class Recorder:
    """The send step of a RunPublisher: prepares the events as the publisher does and keeps what it would send."""

    def __init__(self, scope: RunScope = SCOPE, max_result_chars: MaxResultChars | None = None) -> None:
        self.scope = scope
        self.max_result_chars = max_result_chars
        self.sent: list[PreparedEvent] = []

    def __call__(self, events: Sequence[PendingEvent]) -> list[PublishedEvent]:
        prepared = prepare_events(self.scope, events, max_result_chars=self.max_result_chars, now=NOW)
        offset = len(self.sent)
        self.sent.extend(prepared)
        return [
            PublishedEvent(
                event.event_id,
                event.type,
                0,
                offset + index,
                kafka_consistency_token(DEFAULT_TOOL_EVENTS_TOPIC, 0, offset + index),
            )
            for index, event in enumerate(prepared)
        ]

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(event.value) for event in self.sent]


def run_publisher(
    scope: RunScope = SCOPE, max_result_chars: MaxResultChars | None = None
) -> tuple[RunPublisher, Recorder]:
    recorder = Recorder(scope, max_result_chars)
    return RunPublisher(scope, recorder), recorder


def test_a_call_is_the_json_the_typescript_client_sends() -> None:
    scope = RunScope(
        tenant_id="acme", conversation_id="conv-42", channel="support", run_id="run-7", user_message_id="m-1"
    )
    publisher, recorder = run_publisher(scope)
    published = publisher.tool_call(
        round_index=0, sequence_index=1, tool_call_id="call_1", tool_name="lookup_order", arguments={"orderId": "A-1"}
    )
    event_id = derive_event_id(
        tenant_id="acme",
        conversation_id="conv-42",
        run_id="run-7",
        type="ToolCallRequested",
        round_index=0,
        sequence_index=1,
        tool_call_id="call_1",
    )
    assert published == PublishedEvent(event_id, "ToolCallRequested", 0, 0, "ct1:k:agent.tool-events:0:0")
    assert recorder.sent == [
        PreparedEvent(
            event_id,
            "ToolCallRequested",
            f'{{"eventId":"{event_id}","type":"ToolCallRequested","schemaVersion":2,"tenantId":"acme",'
            '"conversationId":"conv-42","channel":"support","runId":"run-7","occurredAt":"2026-11-02T10:15:30.123Z",'
            '"userMessageId":"m-1","roundIndex":0,"sequenceIndex":1,"toolCallId":"call_1","toolName":"lookup_order",'
            '"arguments":{"orderId":"A-1"}}',
        )
    ]


def test_every_method_builds_its_event_in_the_contracts_shape() -> None:
    publisher, recorder = run_publisher()
    publisher.tool_calls([ToolCall(0, 0, "c1", "search", {"q": "x"}), ToolCall(0, 1, "", "fetch", {})])
    publisher.tool_results([ToolResult(0, 0, "c1", ["hit"]), ToolResult(0, 1, "", "boom", is_error=True)])
    publisher.tool_result(round_index=1, sequence_index=0, tool_call_id="c2", result={"ok": True})
    publisher.approval_requested(round_index=1, sequence_index=0, tool_call_id="c2", reason="refund")
    publisher.approval_decided(round_index=1, sequence_index=0, tool_call_id="c2", approved=True, decided_by="desk-3")
    publisher.complete(
        assistant_message_id="msg-9",
        usage=[TokenUsage(10, 2, "model-large"), TokenUsage(input_tokens=5, output_tokens=1)],
    )
    publisher.fail(error=RunFailure("provider_timeout", "timed out"))
    fields = [{key: value for key, value in event.items() if key not in ENVELOPE_KEYS} for event in recorder.events()]
    assert fields == [
        {"roundIndex": 0, "sequenceIndex": 0, "toolCallId": "c1", "toolName": "search", "arguments": {"q": "x"}},
        {"roundIndex": 0, "sequenceIndex": 1, "toolCallId": "", "toolName": "fetch", "arguments": {}},
        {"toolCallId": "c1", "roundIndex": 0, "sequenceIndex": 0, "result": ["hit"], "isError": False},
        {"toolCallId": "", "roundIndex": 0, "sequenceIndex": 1, "result": "boom", "isError": True},
        {"toolCallId": "c2", "roundIndex": 1, "sequenceIndex": 0, "result": {"ok": True}, "isError": False},
        {"toolCallId": "c2", "roundIndex": 1, "sequenceIndex": 0, "reason": "refund"},
        {"toolCallId": "c2", "roundIndex": 1, "sequenceIndex": 0, "approved": True, "decidedBy": "desk-3"},
        {
            "assistantMessageId": "msg-9",
            "finishReason": "stop",
            "usage": [
                {"inputTokens": 10, "outputTokens": 2, "model": "model-large"},
                {"inputTokens": 5, "outputTokens": 1},
            ],
        },
        {"error": {"code": "provider_timeout", "message": "timed out"}},
    ]
    for event in recorder.events():
        assert list(event)[:8] == ENVELOPE_KEYS
        assert event["schemaVersion"] == PUBLISHED_SCHEMA_VERSION
    assert len({event.event_id for event in recorder.sent}) == len(recorder.sent)


ENVELOPE_KEYS = ["eventId", "type", "schemaVersion", "tenantId", "conversationId", "channel", "runId", "occurredAt"]


def test_a_failure_names_what_it_lacks() -> None:
    publisher, _ = run_publisher()
    with pytest.raises(InvalidToolEventError, match=re.escape("error.message must be string")):
        publisher.fail(error={"code": "boom"})  # type: ignore[arg-type]


def test_a_re_published_step_keeps_its_id_and_a_given_id_wins() -> None:
    first, _ = run_publisher()
    again, _ = run_publisher()
    call: dict[str, Any] = {
        "round_index": 2,
        "sequence_index": 0,
        "tool_call_id": "c",
        "tool_name": "t",
        "arguments": {},
    }
    assert first.tool_call(**call).event_id == again.tool_call(**call).event_id
    assert first.complete(assistant_message_id="a").event_id == again.complete(assistant_message_id="b").event_id
    own = "1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b"
    assert first.tool_call(**call, event_id=own).event_id == own


@given(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.timezones()))
def test_occurred_at_is_utc_with_milliseconds_as_javascript_writes_it(moment: datetime) -> None:
    publisher, recorder = run_publisher()
    publisher.complete(assistant_message_id="a", occurred_at=moment)
    written = recorder.events()[0]["occurredAt"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", written)
    parsed = datetime.fromisoformat(written.replace("Z", "+00:00"))
    assert timedelta(0) <= moment - parsed < timedelta(milliseconds=1)


def test_occurred_at_as_text_passes_through_and_is_checked() -> None:
    publisher, recorder = run_publisher()
    publisher.complete(assistant_message_id="a", occurred_at="2026-11-02T12:15:30+02:00")
    assert recorder.events()[0]["occurredAt"] == "2026-11-02T12:15:30+02:00"
    with pytest.raises(InvalidToolEventError, match="occurredAt must match format"):
        publisher.complete(assistant_message_id="a", occurred_at="2026-02-30T10:15:30Z")


def test_a_datetime_without_a_zone_is_refused_with_the_events_other_problems() -> None:
    publisher, recorder = run_publisher()
    with pytest.raises(InvalidToolEventError) as refused:
        publisher.complete(assistant_message_id="", occurred_at=datetime(2026, 11, 2, 10, 15))
    assert refused.value.problems == [
        "occurredAt must carry a time zone (got a datetime without one): use e.g. datetime.now(timezone.utc)",
        "assistantMessageId must NOT have fewer than 1 characters",
    ]
    assert recorder.sent == []


def test_a_batch_is_sent_whole_or_not_at_all() -> None:
    publisher, recorder = run_publisher()
    with pytest.raises(InvalidToolEventError, match="toolName must NOT have fewer than 1 characters"):
        publisher.tool_calls([ToolCall(0, 0, "a", "ok", {}), ToolCall(0, 1, "b", "", {})])
    assert recorder.sent == []


def test_a_step_that_is_not_json_is_named_not_crashed_on() -> None:
    publisher, recorder = run_publisher()
    with pytest.raises(InvalidToolEventError) as refused:
        publisher.tool_call(
            round_index=object(),  # type: ignore[arg-type]
            sequence_index=0,
            tool_call_id=None,  # type: ignore[arg-type]
            tool_name="t",
            arguments={},
        )
    assert refused.value.problems == ["roundIndex must be integer", "toolCallId must be string"]
    assert recorder.sent == []


def test_a_results_limit_is_that_of_the_tool_of_its_call_published_here() -> None:
    limits: MaxResultChars = {"defaults": 1_000, "tools": {"fetch_page": 5}}
    publisher, recorder = run_publisher(max_result_chars=limits)
    publisher.tool_calls([ToolCall(0, 0, "a", "fetch_page", {}), ToolCall(0, 1, "b", "search", {})])
    publisher.tool_results([ToolResult(0, 0, "a", "0123456789"), ToolResult(0, 1, "b", "0123456789")])
    publisher.tool_result(
        round_index=0, sequence_index=1, tool_call_id="b", result="0123456789", tool_name="fetch_page"
    )
    # Another RunPublisher did not publish the call: the default applies.
    other, other_recorder = run_publisher(max_result_chars=limits)
    other.tool_result(round_index=0, sequence_index=0, tool_call_id="a", result="0123456789")
    results = [event["result"] for event in recorder.events()[2:]] + [other_recorder.events()[0]["result"]]
    assert results == ["01234…[truncated 5 chars]", "0123456789", "01234…[truncated 5 chars]", "0123456789"]


@pytest.mark.parametrize(
    ("scope", "error", "message"),
    [
        ({"tenant_id": ""}, ValueError, "tenant_id is required"),
        ({"conversation_id": "", "run_id": ""}, ValueError, "conversation_id is required; run_id is required"),
        ({"channel": 7}, TypeError, "channel: must be a non-empty string (got int)"),
        ({"user_message_id": ""}, ValueError, "user_message_id: must be a non-empty string when given"),
    ],
)
def test_a_runs_ids_must_be_non_empty_strings(scope: dict[str, Any], error: type[Exception], message: str) -> None:
    ids = {"tenant_id": "acme", "conversation_id": "c", "channel": "s", "run_id": "r", **scope}
    with pytest.raises(error, match=re.escape(message)):
        RunPublisher(RunScope(**ids), Recorder())
    with ToolEventPublisher(brokers=NO_BROKER) as publisher, pytest.raises(error, match=re.escape(message)):
        publisher.run(**ids)


def test_prepare_events_checks_its_limits() -> None:
    with pytest.raises(
        ValueError, match=re.escape("max_event_bytes: must be a whole number of bytes, 1 or more (got 0)")
    ):
        prepare_events(SCOPE, [], max_event_bytes=0)


def test_the_publishers_options_are_checked_naming_every_problem() -> None:
    with pytest.raises(ValueError, match=r"^brokers") as refused:
        ToolEventPublisher(
            brokers=[],
            topic="",
            client_id="",
            kafka_config={"acks": "1", "partitioner": "consistent"},
            max_event_bytes=0,
            max_result_chars={"defaults": 0, "tool": {}},  # type: ignore[arg-type]
            delivery_timeout=0,
        )
    assert str(refused.value).split("; ") == [
        "brokers: at least one broker address is required, each a non-empty string (got [])",
        "topic: must be a non-empty string (got '')",
        "client_id: must be a non-empty string (got '')",
        "kafka_config.acks: set by the publisher (the publisher waits for all in-sync replicas)",
        "kafka_config.partitioner: set by the publisher (murmur2_random puts a conversation on the partition the other"
        " clients pick)",
        "max_event_bytes: must be a whole number of bytes, 1 or more (got 0)",
        "max_result_chars.defaults: must be a whole number of characters, 1 or more (got 0)",
        "max_result_chars.tool: unknown key (allowed: defaults, tools)",
        "delivery_timeout: must be a number of seconds above 0 (got 0)",
    ]


def test_settings_librdkafka_refuses_are_a_value_error() -> None:
    with pytest.raises(ValueError, match="kafka_config: librdkafka refused the settings"):
        ToolEventPublisher(brokers=NO_BROKER, kafka_config={"no.such.setting": "1"})


def test_defaults_and_a_copy_of_max_result_chars() -> None:
    limits: MaxResultCharsByTool = {"tools": {"fetch_page": 5}}
    with ToolEventPublisher(brokers=[NO_BROKER], max_result_chars=limits) as publisher:
        limits["tools"]["fetch_page"] = 500
        assert publisher.topic == DEFAULT_TOOL_EVENTS_TOPIC
        assert publisher._max_result_chars == {"tools": {"fetch_page": 5}}


def test_an_undelivered_event_is_a_retriable_publish_error() -> None:
    with ToolEventPublisher(brokers=NO_BROKER, topic="events", delivery_timeout=0.5) as publisher:
        run = publisher.run(tenant_id="acme", conversation_id="c", channel="s", run_id="r")
        with pytest.raises(PublishError) as failed:
            run.complete(assistant_message_id="a")
    assert failed.value.retriable is True
    assert "_MSG_TIMED_OUT" in failed.value.reason


def test_an_invalid_event_is_refused_before_anything_is_produced() -> None:
    with ToolEventPublisher(brokers=NO_BROKER, delivery_timeout=0.5) as publisher:
        run = publisher.run(tenant_id="acme", conversation_id="c", channel="s", run_id="r")
        with pytest.raises(InvalidToolEventError, match="assistantMessageId"):
            run.complete(assistant_message_id="")
        publisher.flush(0.1)  # nothing waits: nothing was produced


def test_close_is_idempotent_and_a_closed_publisher_publishes_nothing() -> None:
    publisher = ToolEventPublisher(brokers=NO_BROKER)
    run = publisher.run(tenant_id="acme", conversation_id="c", channel="s", run_id="r")
    publisher.close()
    publisher.close()
    with pytest.raises(PublishError, match="closed") as failed:
        run.complete(assistant_message_id="a")
    assert failed.value.retriable is False


def test_complete_says_what_the_answer_cites_when_asked_to() -> None:
    publisher, recorder = run_publisher()
    publisher.complete(assistant_message_id="a", cited_sources=[2, 4])
    publisher.complete(assistant_message_id="b", cited_sources=())
    publisher.complete(assistant_message_id="c")
    assert [event.get("citedSources") for event in recorder.events()] == [[2, 4], [], None]
    assert "citedSources" not in recorder.events()[2]
    with pytest.raises(InvalidToolEventError, match="citedSources"):
        publisher.complete(assistant_message_id="d", cited_sources=[-1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris is the capital [source2].", [2]),
        ("Yes [source3][source1] and again [source3].", [1, 3]),
        ("[source0] [source007]", [0, 7]),
        ("Nothing cited here.", []),
        ("[Source1] [source 2] [source-3] [sources4] source5 [source6", []),
        ("[source2147483648] [source2147483647]", [2147483647]),
    ],
)
def test_cited_sources_from_reads_source_markers_as_the_typescript_client_does(text: str, expected: list[int]) -> None:
    assert cited_sources_from(text) == expected


@given(
    st.lists(st.tuples(st.text(max_size=8), st.integers(min_value=0, max_value=100_000)), max_size=12),
    st.text(max_size=8),
)
def test_cited_sources_from_finds_every_source_marker_sorted_once_each(parts: list[tuple[str, int]], tail: str) -> None:
    # Text between markers holds no marker of its own ("[" is dropped from it).
    text = "".join(f"{before.replace('[', '')}[source{n}]" for before, n in parts) + tail.replace("[", "")
    assert cited_sources_from(text) == sorted({n for _, n in parts})


class AcknowledgingProducer:
    """Stands in for confluent-kafka's Producer: acknowledges each message at the next offset of one partition when
    polled, as librdkafka's delivery reports do."""

    def __init__(self, partition: int = 3, first_offset: int = 40, offset: int | None = None) -> None:
        self.partition = partition
        self.next_offset = first_offset
        self.fixed_offset = offset
        self.waiting: list[tuple[str, Any]] = []

    def produce(self, topic: str, *, value: bytes, key: bytes, on_delivery: Any) -> None:
        self.waiting.append((topic, on_delivery))

    def poll(self, timeout: float) -> int:
        delivered, self.waiting = self.waiting, []
        for topic, report in delivered:
            offset = self.next_offset if self.fixed_offset is None else self.fixed_offset
            self.next_offset += 1
            report(None, AcknowledgedMessage(topic, self.partition, offset))
        return len(delivered)

    def flush(self, timeout: float) -> int:
        return 0


class AcknowledgedMessage:
    def __init__(self, topic: str, partition: int, offset: int) -> None:
        self._where = (topic, partition, offset)

    def topic(self) -> str:
        return self._where[0]

    def partition(self) -> int:
        return self._where[1]

    def offset(self) -> int:
        return self._where[2]


def acknowledging_publisher(producer: AcknowledgingProducer, topic: str = "agent.tool-events") -> ToolEventPublisher:
    publisher = ToolEventPublisher(brokers=NO_BROKER, topic=topic)
    publisher._producer.flush(0)
    publisher._producer = producer
    return publisher


class TestConsistencyTokens:
    def test_each_acknowledged_event_names_its_topic_partition_and_offset(self) -> None:
        publisher = acknowledging_publisher(AcknowledgingProducer(partition=3, first_offset=40), topic="tool.events")
        conversation = f"conv-{uuid.uuid4().hex}"
        run = publisher.run(tenant_id="acme", conversation_id=conversation, channel="web", run_id="r1")
        published = run.tool_calls([ToolCall(0, 0, "a", "search", {}), ToolCall(0, 1, "b", "fetch", {})])
        assert [(e.partition, e.offset, e.consistency_token) for e in published] == [
            (3, 40, "ct1:k:tool.events:3:40"),
            (3, 41, "ct1:k:tool.events:3:41"),
        ]
        completed = run.complete(assistant_message_id="m2")
        assert completed.consistency_token == "ct1:k:tool.events:3:42"
        assert run.consistency_token == "ct1:k:tool.events:3:42"
        assert last_consistency_token("acme", conversation) == "ct1:k:tool.events:3:42"

    def test_every_method_remembers_the_last_token_of_the_conversation(self) -> None:
        conversation = f"conv-{uuid.uuid4().hex}"
        scope = RunScope(tenant_id="acme", conversation_id=conversation, channel="web", run_id="r1")
        publisher, recorder = run_publisher(scope)
        calls: list[tuple[str, Any]] = [
            (
                "tool_call",
                lambda: publisher.tool_call(
                    round_index=0, sequence_index=0, tool_call_id="a", tool_name="s", arguments={}
                ),
            ),
            ("tool_calls", lambda: publisher.tool_calls([ToolCall(1, 0, "b", "s", {})])),
            ("tool_result", lambda: publisher.tool_result(round_index=0, sequence_index=0, tool_call_id="a", result=1)),
            ("tool_results", lambda: publisher.tool_results([ToolResult(1, 0, "b", 2)])),
            (
                "approval_requested",
                lambda: publisher.approval_requested(round_index=1, sequence_index=0, tool_call_id="b"),
            ),
            (
                "approval_decided",
                lambda: publisher.approval_decided(round_index=1, sequence_index=0, tool_call_id="b", approved=True),
            ),
            ("complete", lambda: publisher.complete(assistant_message_id="m2")),
            ("fail", lambda: publisher.fail(error=RunFailure("x", "y"))),
        ]
        for name, call in calls:
            call()
            expected = f"ct1:k:{DEFAULT_TOOL_EVENTS_TOPIC}:0:{len(recorder.sent) - 1}"
            assert (name, last_consistency_token("acme", conversation), publisher.consistency_token) == (
                name,
                expected,
                expected,
            )

    def test_a_send_that_names_no_place_remembers_nothing(self) -> None:
        conversation = f"conv-{uuid.uuid4().hex}"

        def outbox(events: Sequence[PendingEvent]) -> list[PublishedEvent]:
            return [PublishedEvent(e.event_id, e.type, 0, 0) for e in prepare_events(scope, events)]

        scope = RunScope(tenant_id="acme", conversation_id=conversation, channel="web", run_id="r1")
        run = RunPublisher(scope, outbox)
        assert run.complete(assistant_message_id="m").consistency_token == ""
        assert (run.consistency_token, last_consistency_token("acme", conversation)) == ("", None)

    def test_a_late_acknowledgement_of_an_earlier_offset_does_not_move_the_token_back(self) -> None:
        conversation = f"conv-{uuid.uuid4().hex}"
        scope = RunScope(tenant_id="acme", conversation_id=conversation, channel="web", run_id="r1")
        offsets = iter([9, 4])

        def send(events: Sequence[PendingEvent]) -> list[PublishedEvent]:
            offset = next(offsets)
            return [
                PublishedEvent(e.event_id, e.type, 0, offset, kafka_consistency_token("t", 0, offset))
                for e in prepare_events(scope, events)
            ]

        first, second = RunPublisher(scope, send), RunPublisher(scope, send)
        first.complete(assistant_message_id="m1")
        second.complete(assistant_message_id="m2")
        assert last_consistency_token("acme", conversation) == "ct1:k:t:0:9"
        assert (first.consistency_token, second.consistency_token) == ("ct1:k:t:0:9", "ct1:k:t:0:4")

    def test_a_published_event_without_a_token_still_compares_as_before(self) -> None:
        assert PublishedEvent("e", "RunCompleted", 1, 2) == PublishedEvent("e", "RunCompleted", 1, 2, "")
