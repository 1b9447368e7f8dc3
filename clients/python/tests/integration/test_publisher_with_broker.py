"""The publisher against the broker: a run's events land on the conversation's partition, in order, as published."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from toolhistory.events import RunFailure, TokenUsage, ToolCall, ToolResult
from toolhistory.publisher import ToolEventPublisher
from toolhistory.v1 import toolhistory_pb2 as pb

from conftest import Replayed, Stack, wait_for

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolhistory.client import ToolHistoryClient
    from toolhistory.events import JsonObject, JsonValue, PublishedEvent
    from toolhistory.persist import PersistContext, PersistHook

pytestmark = pytest.mark.integration

MURMUR2_SEED = 0x9747B28C
MURMUR2_M = 0x5BD1E995
MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 (the Java client's Utils.murmur2, which kafkajs's default partitioner follows), unsigned."""
    length = len(data)
    h = (MURMUR2_SEED ^ length) & MASK
    for index in range(0, length - length % 4, 4):
        k = int.from_bytes(data[index : index + 4], "little")
        k = (k * MURMUR2_M) & MASK
        k ^= k >> 24
        k = (k * MURMUR2_M) & MASK
        h = ((h * MURMUR2_M) & MASK) ^ k
    tail = length - length % 4
    extra = length % 4
    if extra >= 3:
        h ^= data[tail + 2] << 16
    if extra >= 2:
        h ^= data[tail + 1] << 8
    if extra >= 1:
        h ^= data[tail]
        h = (h * MURMUR2_M) & MASK
    h ^= h >> 13
    h = (h * MURMUR2_M) & MASK
    h ^= h >> 15
    return h


def java_partition(key: str, partitions: int) -> int:
    """The partition the Java client and kafkajs pick for a key: toPositive(murmur2(key)) % partitions."""
    return (murmur2(key.encode("utf-8")) & 0x7FFFFFFF) % partitions


def test_murmur2_is_kafkas() -> None:
    # Values from Kafka's own UtilsTest (as signed 32-bit integers).
    for text, expected in [("21", -973932308), ("foobar", -790332482), ("a-little-bit-long-string", -985981536)]:
        assert murmur2(text.encode()) == expected & MASK


def read_back(stack: Stack, published: list[PublishedEvent]) -> list[Any]:
    """The messages at the published partitions and offsets, read with a consumer of its own."""
    consumer = Consumer(
        {
            "bootstrap.servers": ",".join(stack.brokers),
            "group.id": f"publisher-test-{uuid.uuid4()}",
            "enable.auto.commit": False,
        }
    )
    try:
        wanted = {(event.partition, event.offset) for event in published}
        partitions = sorted({event.partition for event in published})
        consumer.assign(
            [
                TopicPartition(stack.topic, partition, min(e.offset for e in published if e.partition == partition))
                for partition in partitions
            ]
        )
        found: dict[tuple[int, int], Any] = {}
        deadline = time.monotonic() + 30
        while set(found) != wanted:
            assert time.monotonic() < deadline, f"read {len(found)} of {len(wanted)} published events in 30 s"
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            position = (message.partition(), message.offset())
            if position in wanted:
                found[position] = message
        return [found[(event.partition, event.offset)] for event in published]
    finally:
        consumer.close()


def partition_count(stack: Stack) -> int:
    consumer = Consumer({"bootstrap.servers": ",".join(stack.brokers), "group.id": f"metadata-{uuid.uuid4()}"})
    try:
        return len(consumer.list_topics(stack.topic, timeout=10).topics[stack.topic].partitions)
    finally:
        consumer.close()


def test_a_run_lands_on_its_conversations_partition_in_order(stack: Stack, publisher: ToolEventPublisher) -> None:
    tenant = stack.tenant
    conversation = f"conv-{uuid.uuid4()}"
    run = publisher.run(tenant_id=tenant, conversation_id=conversation, channel="python-publisher", run_id="run-1")
    published = [
        *run.tool_calls([ToolCall(0, 0, "call_a", "search", {"q": "ü"}), ToolCall(0, 1, "call_b", "fetch", {})]),
        *run.tool_results([ToolResult(0, 0, "call_a", ["hit"]), ToolResult(0, 1, "call_b", "page", is_error=True)]),
        run.complete(assistant_message_id="msg-1", usage=[TokenUsage(10, 2, "model-large")]),
    ]
    assert [event.type for event in published] == [
        "ToolCallRequested",
        "ToolCallRequested",
        "ToolResultReceived",
        "ToolResultReceived",
        "RunCompleted",
    ]
    # One conversation, one partition: the one the Java client and kafkajs pick for its key.
    assert {event.partition for event in published} == {java_partition(conversation, partition_count(stack))}
    offsets = [event.offset for event in published]
    assert offsets == sorted(offsets)
    assert len(set(offsets)) == len(offsets)

    messages = read_back(stack, published)
    assert [message.key() for message in messages] == [conversation.encode()] * len(published)
    values = [json.loads(message.value()) for message in messages]
    assert [value["eventId"] for value in values] == [event.event_id for event in published]
    assert [value["type"] for value in values] == [event.type for event in published]
    assert values[0]["arguments"] == {"q": "ü"}
    assert values[-1]["usage"] == [{"inputTokens": 10, "outputTokens": 2, "model": "model-large"}]


def test_a_re_published_step_is_sent_again_with_its_event_id(stack: Stack, publisher: ToolEventPublisher) -> None:
    tenant = stack.tenant
    conversation = f"conv-{uuid.uuid4()}"
    step: dict[str, Any] = {
        "round_index": 0,
        "sequence_index": 0,
        "tool_call_id": "call_1",
        "tool_name": "search",
        "arguments": {},
    }
    first = publisher.run(tenant_id=tenant, conversation_id=conversation, channel="python-publisher", run_id="run-1")
    # A worker restarted after a crash: another RunPublisher of the same run.
    again = publisher.run(tenant_id=tenant, conversation_id=conversation, channel="python-publisher", run_id="run-1")
    published = [first.tool_call(**step), again.tool_call(**step), again.fail(error=RunFailure("crashed", "boom"))]
    assert published[0].event_id == published[1].event_id
    assert published[0].offset < published[1].offset
    values = [json.loads(message.value()) for message in read_back(stack, published)]
    assert values[0]["eventId"] == values[1]["eventId"] == published[0].event_id
    assert values[2]["error"] == {"code": "crashed", "message": "boom"}


def test_a_persist_hook_keeps_what_it_removes_off_the_topic(
    stack: Stack, client: ToolHistoryClient, ids: Callable[[str], str], replayed: Replayed
) -> None:
    secret = f"tok-live-{uuid.uuid4().hex[:10]}"

    def without_token(payload: JsonValue, _context: PersistContext) -> JsonValue:
        assert isinstance(payload, dict)
        return {**payload, "apiToken": "[removed]"}

    hooks: dict[str, PersistHook] = {
        "call_api": without_token,
        "read_vault": lambda _payload, _context: "metadata",
        "unlock_door": lambda _payload, _context: None,
    }
    conversation_id = ids("conv")
    steps: list[tuple[str, JsonObject, JsonValue]] = [
        ("call_api", {"endpoint": "/orders", "apiToken": secret}, {"status": 200, "apiToken": secret}),
        ("read_vault", {"key": secret}, f"the value is {secret}"),
        ("unlock_door", {"code": secret}, {"opened": True, "code": secret}),
        ("get_weather", {"city": "Oslo"}, "rain"),
    ]
    with ToolEventPublisher(brokers=stack.brokers, topic=stack.topic, persist=hooks) as redacting:
        run = redacting.run(tenant_id=stack.tenant, conversation_id=conversation_id, channel="web", run_id="run-1")
        published = run.tool_calls(
            [ToolCall(0, index, f"call_{index}", name, arguments) for index, (name, arguments, _) in enumerate(steps)]
        )
        published += run.tool_results(
            [ToolResult(0, index, f"call_{index}", result) for index, (_, _, result) in enumerate(steps)]
        )
        published.append(run.complete(assistant_message_id="msg-1"))

    # Nothing the hooks removed is on the topic.
    messages = read_back(stack, published)
    for message in messages:
        assert secret not in message.value().decode("utf-8")
    events = [json.loads(message.value()) for message in messages]
    assert events[0]["arguments"] == {"endpoint": "/orders", "apiToken": "[removed]"}
    assert events[5]["result"] is None
    assert events[5]["redaction"] == {"persist": "metadata"}
    assert events[2]["arguments"] == {}
    assert events[2]["redaction"] == {"persist": "none"}
    assert "producerRedacted" not in events[3]

    def listed() -> list[Any]:
        found = client.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation_id)
        return sorted(found, key=lambda invocation: invocation.sequence_index)

    invocations = wait_for(
        "four answered invocations",
        listed,
        lambda found: len(found) == 4 and all(i.HasField("completed_at") for i in found),
    )
    assert [(i.tool_name, i.producer_redacted, i.persist) for i in invocations] == [
        ("call_api", True, pb.PERSIST_MODE_FULL),
        ("read_vault", True, pb.PERSIST_MODE_METADATA),
        ("unlock_door", True, pb.PERSIST_MODE_NONE),
        ("get_weather", False, pb.PERSIST_MODE_FULL),
    ]
    vault, door = invocations[1], invocations[2]
    assert vault.arguments_original_bytes == len(json.dumps({"key": secret}, separators=(",", ":")).encode())
    assert vault.result_original_bytes == len(json.dumps(f"the value is {secret}").encode())
    assert not door.HasField("arguments_original_bytes")
    assert not door.HasField("result_original_bytes")

    # The run's end was published after the results, so it may be recorded a moment after them.
    replay = replayed(client, conversation_id, "openai", until=lambda history: len(history.turns) == 1)
    assert [(call.tool_name, json.loads(call.arguments_json)) for call in replay.turns[0].rounds[0].calls] == [
        ("call_api", {"endpoint": "/orders", "apiToken": "[removed]"}),
        ("get_weather", {"city": "Oslo"}),
    ]
    assert [(o.tool_name, o.reason) for o in replay.omitted] == [
        ("read_vault", pb.OMISSION_REASON_POLICY_SKIPPED),
        ("unlock_door", pb.OMISSION_REASON_POLICY_SKIPPED),
    ]
