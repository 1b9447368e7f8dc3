#!/usr/bin/python3
"""A toolhistory agent worker in Python, with Debian's packages only.

It publishes one complete agent run to Kafka as the event contract says
(libs/contract/schema/tool-event.schema.json), then asks the service over
gRPC (proto/toolhistory/v1/toolhistory.proto) for the history a model may see
again, as a worker does at the start of every turn:

  round 0: two parallel tool calls and their results
           (published twice, as a worker retrying after a crash would:
           the event ids are stable, so each event is recorded once)
  round 1: one tool call and its result
  RunCompleted, finishReason "stop" (the model answered after round 1)

It prints the provider-ready OpenAI messages of the replayed turn and exits 0
only if they show the 3 calls paired with their results, in order.

Run it with Debian's interpreter, after ./generate-stubs.sh:

  /usr/bin/python3 agent.py

Settings (environment):
  KAFKA_BROKERS          127.0.0.1:9092 (comma-separated host:port)
  TOOL_EVENTS_TOPIC      agent.tool-events
  TOOLHISTORY_ADDRESS    127.0.0.1:50051 (host:port of the gRPC API, plaintext)
  TOOLHISTORY_TOKEN      optional bearer token, sent as `authorization` metadata
  TENANT_ID              a new unique one per run of this script
  CONVERSATION_ID        a new unique one per run of this script
  RUN_ID                 a new unique one per run of this script
  CHANNEL                support
  REPLAY_TIMEOUT_SECONDS 60 (how long to wait for the run to be replayable)

Exit codes: 0 the replay is as expected; 1 publishing failed or the replay is
wrong or late; 2 a package or the generated stubs are missing.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
STUBS_DIR = Path(os.environ.get("TOOLHISTORY_STUBS_DIR", str(HERE / "generated")))
SCHEMA_FILE = REPO_ROOT / "libs" / "contract" / "schema" / "tool-event.schema.json"

DEBIAN_PACKAGES = (
    "python3-confluent-kafka python3-grpcio python3-protobuf "
    "protobuf-compiler protobuf-compiler-grpc libprotobuf-dev"
)


def fail(message: str, code: int = 1) -> None:
    print(f"agent.py: FAILED: {message}", file=sys.stderr)
    sys.exit(code)


try:
    import grpc
    from confluent_kafka import KafkaError, Producer
except ImportError as error:
    fail(
        f"{error} (interpreter: {sys.executable}). Install Debian's packages "
        f"(apt-get install --no-install-recommends {DEBIAN_PACKAGES}) and run this "
        "script with Debian's interpreter: /usr/bin/python3 agent.py",
        2,
    )

sys.path.insert(0, str(STUBS_DIR))
try:
    from toolhistory.v1 import toolhistory_pb2 as pb
    from toolhistory.v1 import toolhistory_pb2_grpc as pb_grpc
except ImportError as error:
    fail(f"the gRPC stubs are missing in {STUBS_DIR} ({error}): run ./generate-stubs.sh first", 2)


# --- event ids -------------------------------------------------------------

# The namespace of toolhistory's name-based event ids; the TypeScript client
# (libs/client, deriveEventId) uses the same one and the same names, so a run
# published from Python and retried from Node still gets the same ids.
EVENT_ID_NAMESPACE = uuid.UUID("5b0f3c1e-9a6d-4c3b-8f2e-7d41a9e6c2b0")
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class RunScope:
    tenant_id: str
    conversation_id: str
    channel: str
    run_id: str


def name_based_id(*parts: Any) -> str:
    """A UUID version 5 of the parts: the same parts give the same id, every time."""
    name = json.dumps(list(parts), separators=(",", ":"), ensure_ascii=False)
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, name))


def event_id(run: RunScope, event_type: str, step: tuple = ()) -> str:
    """The id of one step of a run: what the event is, not when it was sent."""
    return name_based_id("toolhistory/v1", run.tenant_id, run.conversation_id, run.run_id, event_type, *step)


def llm_tool_call_id(run: RunScope, round_index: int, sequence_index: int) -> str:
    """Stands in for the id an LLM gives a tool call (the same on a retry of the step)."""
    return "call_" + uuid.uuid5(EVENT_ID_NAMESPACE, f"{run.run_id}/{round_index}/{sequence_index}").hex[:24]


# --- the events ------------------------------------------------------------


def now() -> str:
    # With a zone: datetime.utcnow().isoformat() has none and is dead-lettered.
    return datetime.now(timezone.utc).isoformat()


def envelope(run: RunScope, event_type: str, step: tuple = ()) -> dict:
    return {
        "eventId": event_id(run, event_type, step),
        "type": event_type,
        "schemaVersion": SCHEMA_VERSION,
        "tenantId": run.tenant_id,
        "conversationId": run.conversation_id,
        "channel": run.channel,
        "runId": run.run_id,
        "occurredAt": now(),
    }


@dataclass(frozen=True)
class ToolStep:
    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    arguments: dict
    result: Any  # a string or any JSON value but null

    def step(self) -> tuple:
        return (self.round_index, self.sequence_index, self.tool_call_id)


def tool_call_requested(run: RunScope, call: ToolStep) -> dict:
    return {
        **envelope(run, "ToolCallRequested", call.step()),
        "roundIndex": call.round_index,
        "sequenceIndex": call.sequence_index,
        "toolCallId": call.tool_call_id,
        "toolName": call.tool_name,
        "arguments": call.arguments,
    }


def tool_result_received(run: RunScope, call: ToolStep) -> dict:
    return {
        **envelope(run, "ToolResultReceived", call.step()),
        "toolCallId": call.tool_call_id,
        "roundIndex": call.round_index,
        "sequenceIndex": call.sequence_index,
        "result": call.result,
        "isError": False,
    }


def run_completed(run: RunScope, assistant_message_id: str, usage: list) -> dict:
    return {
        **envelope(run, "RunCompleted"),
        "assistantMessageId": assistant_message_id,
        "finishReason": "stop",
        "usage": usage,
    }


def scripted_rounds(run: RunScope) -> list:
    """What the model asked for in this run, and what the tools answered."""

    def call(r: int, s: int, name: str, arguments: dict, result: Any) -> ToolStep:
        return ToolStep(r, s, llm_tool_call_id(run, r, s), name, arguments, result)

    return [
        [
            call(0, 0, "lookup_order", {"orderId": "A-1001"}, {"status": "shipped", "carrier": "DHL", "parcel": "P-77"}),
            call(0, 1, "lookup_customer", {"customerId": "C-7"}, {"name": "Ada", "tier": "gold"}),
        ],
        [call(1, 0, "track_parcel", {"parcel": "P-77"}, "in transit, arriving tomorrow")],
    ]


def round_events(run: RunScope, calls: list) -> list:
    """A round's calls, then their results as the parallel tools finish (here: last first)."""
    return [tool_call_requested(run, c) for c in calls] + [tool_result_received(run, c) for c in reversed(calls)]


# --- checking events against the contract (optional) -------------------------


def schema_checker() -> Optional[Callable[[dict], None]]:
    """Checks each event against the JSON Schema when Debian's python3-jsonschema is installed."""
    try:
        import jsonschema
    except ImportError:
        print("(python3-jsonschema not installed: events are not checked against the JSON Schema before sending)")
        return None
    if not SCHEMA_FILE.is_file():
        return None
    validator_class = getattr(jsonschema, "Draft202012Validator", None)
    if validator_class is None:
        print("(python3-jsonschema is too old for JSON Schema 2020-12: events are not checked before sending)")
        return None
    validator = validator_class(json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))

    def check(event: dict) -> None:
        problems = sorted(validator.iter_errors(event), key=lambda e: list(e.absolute_path))
        if problems:
            where = "/".join(str(p) for p in problems[0].absolute_path) or "(event)"
            fail(f"{event['type']} {event['eventId']} does not meet the event contract: {where}: {problems[0].message}")

    return check


# --- publishing --------------------------------------------------------------


# How long the producer keeps trying to deliver an event before it reports a failure.
DELIVERY_TIMEOUT_MS = 30000


class EventPublisher:
    """Publishes events keyed by conversation id and checks every delivery report."""

    def __init__(self, brokers: str, topic: str, check: Optional[Callable[[dict], None]]):
        self.topic = topic
        self.check = check
        self.failures: list = []
        self.producer = Producer(
            {
                "bootstrap.servers": brokers,
                "client.id": "toolhistory-python-agent",
                # Kafka's own partitioner (murmur2, as Java and kafkajs): librdkafka's
                # default (consistent_random, a CRC32 hash) would put a conversation
                # published from Python and from Node on two partitions.
                "partitioner": "murmur2_random",
                # No duplicates or reordering from the producer's own retries.
                "enable.idempotence": True,
                "acks": "all",
                "message.timeout.ms": DELIVERY_TIMEOUT_MS,
                "error_cb": self._on_error,
            }
        )

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            self.failures.append(f"fatal producer error: {error}")
        print(f"agent.py: kafka: {error}", file=sys.stderr)

    def _delivery_report(self, event: dict) -> Callable:
        def report(error: Optional[KafkaError], message) -> None:
            if error is not None:
                self.failures.append(f"{event['type']} {event['eventId']}: {error.str()}")

        return report

    def publish(self, event: dict) -> None:
        if self.check is not None:
            self.check(event)
        value = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        while True:
            try:
                self.producer.produce(
                    self.topic,
                    key=event["conversationId"].encode("utf-8"),
                    value=value,
                    on_delivery=self._delivery_report(event),
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain
                self.producer.poll(0.1)
        self.producer.poll(0)

    def flush(self) -> None:
        """Waits for every delivery report; fails unless every event was acknowledged by all in-sync replicas."""
        # Past the delivery timeout every report has arrived, failed ones included.
        timeout_seconds = DELIVERY_TIMEOUT_MS / 1000 + 5
        remaining = self.producer.flush(timeout_seconds)
        if self.failures:
            fail(
                f"{len(self.failures)} event(s) not delivered to topic {self.topic}, "
                f"the first: {self.failures[0]} (is the broker up, and does the topic exist? "
                "The service creates it when it starts)"
            )
        if remaining:
            fail(f"{remaining} event(s) not acknowledged by the broker within {timeout_seconds:.0f}s")


# --- replay ------------------------------------------------------------------

RETRIABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def rpc_failure(what: str, error: grpc.RpcError) -> str:
    return f"{what} failed: {error.code().name}: {error.details()}"


def await_replay(stub, metadata: list, run: RunScope, expected_rounds: int, timeout_seconds: float):
    """Polls GetReplayHistory (every 200 ms) until the run is replayed with all its rounds."""
    request = pb.GetReplayHistoryRequest(
        tenant_id=run.tenant_id, conversation_id=run.conversation_id, format=pb.HISTORY_FORMAT_OPENAI_CHAT
    )
    deadline = time.monotonic() + timeout_seconds
    seen = "no answer yet"
    while True:
        try:
            response = stub.GetReplayHistory(request, metadata=metadata, timeout=5)
            turn = next((t for t in response.turns if t.run_id == run.run_id), None)
            if turn is not None and turn.status == pb.RUN_STATUS_COMPLETED and len(turn.rounds) >= expected_rounds:
                return response, turn
            if turn is None:
                seen = "the run is not replayed yet"
            else:
                seen = f"run {pb.RunStatus.Name(turn.status)} with {len(turn.rounds)} round(s)"
            omitted = [o for o in response.omitted if o.run_id == run.run_id]
            if omitted:
                seen += "; omitted: " + ", ".join(
                    f"{o.tool_name}#{o.round_index}.{o.sequence_index} ({pb.OmissionReason.Name(o.reason)})" for o in omitted
                )
        except grpc.RpcError as error:
            if error.code() not in RETRIABLE:
                fail(rpc_failure("GetReplayHistory", error))
            seen = f"{error.code().name}: {error.details()}"
        if time.monotonic() >= deadline:
            fail(
                f"run {run.run_id} was not replayed with its {expected_rounds} rounds within {timeout_seconds:g}s "
                f"(last seen: {seen}). Is the service recording this topic, and listening there?"
            )
        time.sleep(0.2)


def same_result(replayed: str, expected: Any) -> bool:
    # A string result is replayed as it is; a JSON result serialized to a string.
    if isinstance(expected, str):
        return replayed == expected
    try:
        return json.loads(replayed) == expected
    except ValueError:
        return False


def check_turn(turn, rounds: list, assistant_message_id: str) -> list:
    """What is wrong with the replayed turn: calls, results and their order, and the OpenAI messages."""
    problems = []
    if turn.assistant_message_id != assistant_message_id:
        problems.append(f"assistant_message_id is {turn.assistant_message_id!r}, not {assistant_message_id!r}")
    got = [(r.round_index, [c.tool_call_id for c in r.calls]) for r in turn.rounds]
    want = [(calls[0].round_index, [c.tool_call_id for c in calls]) for calls in rounds]
    if got != want:
        problems.append(f"rounds and calls are {got}, expected {want}")
        return problems
    for replayed_round, calls in zip(turn.rounds, rounds):
        for replayed, call in zip(replayed_round.calls, calls):
            label = f"{call.tool_name} ({call.tool_call_id})"
            if replayed.tool_name != call.tool_name or replayed.sequence_index != call.sequence_index:
                problems.append(f"{label}: replayed as {replayed.tool_name} #{replayed.sequence_index}")
            if json.loads(replayed.arguments_json or "{}") != call.arguments:
                problems.append(f"{label}: arguments {replayed.arguments_json}")
            if replayed.is_error or replayed.expired or not same_result(replayed.result, call.result):
                problems.append(f"{label}: result {replayed.result!r} (is_error={replayed.is_error}, expired={replayed.expired})")

    # The provider-ready messages: per round, one assistant message with its
    # tool_calls, then one tool message per call, in the same order.
    try:
        messages = json.loads(turn.messages_json)
    except ValueError as error:
        return problems + [f"messages_json is not JSON: {error}"]
    expected_shape = []
    for calls in rounds:
        expected_shape.append(("assistant", [c.tool_call_id for c in calls]))
        expected_shape.extend(("tool", c.tool_call_id) for c in calls)
    shape = []
    for m in messages:
        if m.get("role") == "assistant":
            shape.append(("assistant", [tc.get("id") for tc in m.get("tool_calls") or []]))
        else:
            shape.append((m.get("role"), m.get("tool_call_id")))
    if shape != expected_shape:
        problems.append(f"messages are {shape}, expected {expected_shape}")
    results = {c.tool_call_id: c.result for calls in rounds for c in calls}
    for m in messages:
        if m.get("role") == "tool" and m.get("tool_call_id") in results:
            if not same_result(m.get("content", ""), results[m["tool_call_id"]]):
                problems.append(f"tool message {m['tool_call_id']}: content {m.get('content')!r}")
    return problems


def recorded_events_of_run(stub, metadata: list, run: RunScope, timeout_seconds: float) -> Optional[list]:
    """The run's events as recorded (SubscribeToolEvents from the start), up to its RunCompleted; None if not allowed."""
    request = pb.SubscribeToolEventsRequest(tenant_id=run.tenant_id, from_position=0)
    stream = stub.SubscribeToolEvents(request, metadata=metadata, timeout=timeout_seconds)
    recorded = []
    try:
        for event in stream:
            if event.conversation_id == run.conversation_id and event.run_id == run.run_id:
                recorded.append(event)
                if event.type == "RunCompleted":
                    return recorded
    except grpc.RpcError as error:
        if error.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNIMPLEMENTED):
            print(f"(recorded-once check skipped: SubscribeToolEvents answered {error.code().name}: {error.details()})")
            return None
        fail(rpc_failure("SubscribeToolEvents", error))
    finally:
        stream.cancel()
    fail(f"SubscribeToolEvents ended before the RunCompleted of run {run.run_id}")
    return None


def step_of(event: dict) -> tuple:
    """What makes an event the same step of its run (as the event id is derived)."""
    if event["type"] in ("ToolCallRequested", "ToolResultReceived"):
        return (event["type"], event["roundIndex"], event["sequenceIndex"], event["toolCallId"])
    return (event["type"],)


def check_recorded_once(published: list, recorded: list) -> list:
    """Every step published (some of them twice) is recorded exactly once, under the id it was published with."""
    ids = {e["eventId"]: step_of(e) for e in published}
    problems = []
    times = {}
    for event in recorded:
        step = step_of(json.loads(event.payload_json))
        times[step] = times.get(step, 0) + 1
        if ids.get(event.event_id) != step:
            problems.append(f"recorded {step} under event id {event.event_id}, which was not published for it")
    for step in dict.fromkeys(step_of(e) for e in published):
        if times.get(step, 0) != 1:
            problems.append(f"{step} recorded {times.get(step, 0)} times")
    return problems


# --- main ----------------------------------------------------------------------


def main() -> None:
    unique = uuid.uuid4().hex[:12]
    run = RunScope(
        tenant_id=os.environ.get("TENANT_ID") or f"py-tenant-{unique}",
        conversation_id=os.environ.get("CONVERSATION_ID") or f"py-conv-{unique}",
        channel=os.environ.get("CHANNEL") or "support",
        run_id=os.environ.get("RUN_ID") or f"py-run-{unique}",
    )
    brokers = os.environ.get("KAFKA_BROKERS") or "127.0.0.1:9092"
    topic = os.environ.get("TOOL_EVENTS_TOPIC") or "agent.tool-events"
    address = os.environ.get("TOOLHISTORY_ADDRESS") or "127.0.0.1:50051"
    token = os.environ.get("TOOLHISTORY_TOKEN") or ""
    try:
        replay_timeout = float(os.environ.get("REPLAY_TIMEOUT_SECONDS") or "60")
    except ValueError:
        fail("REPLAY_TIMEOUT_SECONDS must be a number of seconds", 2)

    print(
        f"run {run.run_id}: tenant {run.tenant_id}, conversation {run.conversation_id}, channel {run.channel}; "
        f"publishing to {topic} on {brokers}"
    )
    rounds = scripted_rounds(run)
    assistant_message_id = f"msg-{run.run_id}"
    publisher = EventPublisher(brokers, topic, schema_checker())
    published: list = []

    def publish_all(events: list, what: str) -> None:
        for event in events:
            publisher.publish(event)
        publisher.flush()
        published.extend(events)
        print(f"published {what}: {len(events)} events, delivery confirmed")

    publish_all(round_events(run, rounds[0]), "round 0 (2 parallel calls and their results)")
    # A worker that crashed after round 0 and redoes it publishes the same
    # steps again, with new timestamps but the same event ids: recorded once.
    publish_all(round_events(run, rounds[0]), "round 0 again, as a retry (same event ids)")
    publish_all(round_events(run, rounds[1]), "round 1 (1 call and its result)")
    # Three service (LLM) calls: one asked for round 0, one for round 1, one answered.
    usage = [
        {"inputTokens": 812, "outputTokens": 46, "model": "example-model"},
        {"inputTokens": 1024, "outputTokens": 31, "model": "example-model"},
        {"inputTokens": 1187, "outputTokens": 92, "model": "example-model"},
    ]
    publish_all([run_completed(run, assistant_message_id, usage)], "RunCompleted (finishReason stop)")

    metadata = [("authorization", f"Bearer {token}")] if token else []
    # Plaintext, as to a service on loopback; a proxy from the environment would not reach it.
    with grpc.insecure_channel(address, options=[("grpc.enable_http_proxy", 0)]) as channel:
        stub = pb_grpc.ToolHistoryStub(channel)
        print(f"waiting for the replay at {address} (up to {replay_timeout:g}s)")
        started = time.monotonic()
        response, turn = await_replay(stub, metadata, run, len(rounds), replay_timeout)
        print(f"replayed after {time.monotonic() - started:.1f}s; the messages to send before {turn.assistant_message_id}:")
        print(json.dumps(json.loads(turn.messages_json), indent=2, ensure_ascii=False))

        problems = check_turn(turn, rounds, assistant_message_id)
        if problems:
            fail("the replay is not what was published:\n  " + "\n  ".join(problems))

        recorded = recorded_events_of_run(stub, metadata, run, timeout_seconds=30)
        if recorded is not None:
            problems = check_recorded_once(published, recorded)
            if problems:
                fail("publishing a step twice did not record it once:\n  " + "\n  ".join(problems))
            print(f"recorded once each: {len(published)} events published, {len(recorded)} recorded")

    calls = [c for r in turn.rounds for c in r.calls]
    print(
        f"OK: run {run.run_id} replays {len(calls)} calls paired with their results, in order: "
        + ", ".join(f"{c.tool_name}#{r.round_index}.{c.sequence_index}" for r in turn.rounds for c in r.calls)
    )


if __name__ == "__main__":
    main()
