#!/usr/bin/python3
"""A toolhistory agent worker in Python, with Debian's packages only.

It publishes two agent runs of one conversation to Kafka as the event
contract says (libs/contract/schema/tool-event.schema.json), and asks the
service over gRPC (proto/toolhistory/v1/toolhistory.proto) for the history a
model may see again, as a worker does at the start of every turn:

  run 1, started by the user's message:
    round 0: two parallel tool calls and their results
             (published twice, as a worker retrying after a crash would:
             the event ids are stable, so each event is recorded once)
    round 1: one tool call and its result
    round 2: issue_refund, which waits for a person's approval
             (ToolApprovalRequested); the run completes there
  replay: runs 1's 3 answered calls, and the refund in pending_approvals
  run 2, started by the person's answer:
    ToolApprovalDecided (approved) and the refund's result, with the ids of
    the call made in run 1
    round 0: one tool call whose result is too large for an event: cut to fit,
             with originalBytes
    RunCompleted, finishReason "stop"
  replay: run 2 resumes the refund's round, then its own round

Every event carries userMessageId, the host's id of the message that started
its run. It prints what replay returns and exits 0 only if it is what the
contract says.

Run it with Debian's interpreter, after ./generate-stubs.sh:

  /usr/bin/python3 agent.py

Settings (environment):
  KAFKA_BROKERS          127.0.0.1:9092 (comma-separated host:port)
  TOOL_EVENTS_TOPIC      agent.tool-events
  TOOLHISTORY_ADDRESS    127.0.0.1:50051 (host:port of the gRPC API, plaintext)
  TOOLHISTORY_TOKEN      optional bearer token, sent as `authorization` metadata
  TENANT_ID              a new unique one per run of this script
  CONVERSATION_ID        a new unique one per run of this script
  RUN_ID                 a new unique one per run of this script (run 2 is
                         RUN_ID-resumed)
  CHANNEL                support
  REPLAY_TIMEOUT_SECONDS 60 (how long to wait for a run to be replayable)

Exit codes: 0 the replay is as expected; 1 publishing failed or the replay is
wrong or late; 2 a package or the generated stubs are missing.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
    # The host's id of the message that started the run (every event's userMessageId).
    user_message_id: str


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
    return datetime.now(UTC).isoformat()


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
        "userMessageId": run.user_message_id,
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

    def label(self) -> str:
        return f"{self.tool_name}#{self.round_index}.{self.sequence_index}"


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
    """The result of a call; `run` is the run that got it, which may be a later one than the call's."""
    return {
        **envelope(run, "ToolResultReceived", call.step()),
        "toolCallId": call.tool_call_id,
        "roundIndex": call.round_index,
        "sequenceIndex": call.sequence_index,
        "result": call.result,
        "isError": False,
    }


def tool_approval_requested(run: RunScope, call: ToolStep, reason: str) -> dict:
    """The call waits for a person: published in the call's run, with the call's ids."""
    return {
        **envelope(run, "ToolApprovalRequested", call.step()),
        "toolCallId": call.tool_call_id,
        "roundIndex": call.round_index,
        "sequenceIndex": call.sequence_index,
        "reason": reason,
    }


def tool_approval_decided(run: RunScope, call: ToolStep, approved: bool, reason: str, decided_by: str) -> dict:
    """The person's answer: published in the run that resumed (`run`), with the ids of the call it answers."""
    return {
        **envelope(run, "ToolApprovalDecided", call.step()),
        "toolCallId": call.tool_call_id,
        "roundIndex": call.round_index,
        "sequenceIndex": call.sequence_index,
        "approved": approved,
        "reason": reason,
        "decidedBy": decided_by,
    }


def run_completed(run: RunScope, assistant_message_id: str, finish_reason: str, usage: list) -> dict:
    return {
        **envelope(run, "RunCompleted"),
        "assistantMessageId": assistant_message_id,
        "finishReason": finish_reason,
        "usage": usage,
    }


# --- fitting a result into one event ---------------------------------------

# The largest event the service records (MAX_EVENT_BYTES, 1 MiB by default);
# a larger one is dead-lettered.
MAX_EVENT_BYTES = 1024 * 1024


def event_bytes(event: dict) -> bytes:
    """The event as it is published: compact UTF-8 JSON."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def truncation_marker(removed_chars: int) -> str:
    # The service's own marker (policy maxResultChars), with thousands separators.
    return f"…[truncated {removed_chars:,} chars]"


def fit_result(event: dict, limit: int = MAX_EVENT_BYTES) -> dict:
    """A ToolResultReceived cut to fit the event limit, as docs/event-contract.md says ("Payloads cut to fit").

    The result's text (a string as it is, any other JSON value as its JSON
    text) keeps the longest start for which the event fits, followed by the
    marker; originalBytes says how large the result was (its UTF-8 JSON).
    An event that fits is returned as it is.
    """
    if len(event_bytes(event)) <= limit:
        return event
    result = event["result"]
    original_json = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    text = result if isinstance(result, str) else original_json

    def cut(keep: int) -> dict:
        kept = text[:keep] + truncation_marker(len(text) - keep)
        return {**event, "result": kept, "originalBytes": len(original_json.encode("utf-8"))}

    if len(event_bytes(cut(0))) > limit:
        raise ValueError(f"{event['type']} {event['eventId']} does not fit in {limit} bytes even without its result")
    # The longest start that fits: the event grows with what is kept.
    fits, too_long = 0, len(text)
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if len(event_bytes(cut(middle))) <= limit:
            fits = middle
        else:
            too_long = middle
    return cut(fits)


# --- what the model does ----------------------------------------------------

# Refunds over 100 EUR wait for a person; the host asks them and, when they
# answer, starts a new run of the conversation.
APPROVAL_REASON = "refunds over 100 EUR need a person's approval"
DECISION_REASON = "the parcel was lost in transit"
DECIDED_BY = "support-lead"


def scripted_rounds(run: RunScope) -> list:
    """What the model asked for in run 1 before the refund, and what the tools answered."""

    def call(r: int, s: int, name: str, arguments: dict, result: Any) -> ToolStep:
        return ToolStep(r, s, llm_tool_call_id(run, r, s), name, arguments, result)

    return [
        [
            call(0, 0, "lookup_order", {"orderId": "A-1001"}, {"status": "shipped", "carrier": "DHL", "parcel": "P-77"}),
            call(0, 1, "lookup_customer", {"customerId": "C-7"}, {"name": "Ada", "tier": "gold"}),
        ],
        [call(1, 0, "track_parcel", {"parcel": "P-77"}, "in transit, arriving tomorrow")],
    ]


def refund_call(run: RunScope) -> ToolStep:
    """Round 2 of run 1: the call that waits for approval; its result comes in run 2."""
    arguments = {"orderId": "A-1001", "amountEur": 129.9}
    return ToolStep(2, 0, llm_tool_call_id(run, 2, 0), "issue_refund", arguments, {"refundId": "R-501", "status": "refunded"})


def order_history_call(run: RunScope) -> ToolStep:
    """Round 0 of run 2: a tool whose result (1.3 MB of JSON) is larger than an event may be."""
    scans = [{"scan": n, "hub": "Leipzig", "status": "sorted, on the next truck"} for n in range(20_000)]
    result = {"orderId": "A-1001", "scans": scans}
    return ToolStep(0, 0, llm_tool_call_id(run, 0, 0), "export_order_history", {"orderId": "A-1001"}, result)


def round_events(run: RunScope, calls: list) -> list:
    """A round's calls, then their results as the parallel tools finish (here: last first)."""
    return [tool_call_requested(run, c) for c in calls] + [tool_result_received(run, c) for c in reversed(calls)]


# --- checking events against the contract (optional) -------------------------


def schema_checker() -> Callable[[dict], None] | None:
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

    def __init__(self, brokers: str, topic: str, check: Callable[[dict], None] | None):
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
                # Room for an event of MAX_EVENT_BYTES and its key and headers.
                "message.max.bytes": 2 * MAX_EVENT_BYTES,
                "error_cb": self._on_error,
            }
        )

    def _on_error(self, error: KafkaError) -> None:
        if error.fatal():
            self.failures.append(f"fatal producer error: {error}")
        print(f"agent.py: kafka: {error}", file=sys.stderr)

    def _delivery_report(self, event: dict) -> Callable:
        def report(error: KafkaError | None, message) -> None:
            if error is not None:
                self.failures.append(f"{event['type']} {event['eventId']}: {error.str()}")

        return report

    def publish(self, event: dict) -> None:
        if self.check is not None:
            self.check(event)
        value = event_bytes(event)
        if len(value) > MAX_EVENT_BYTES:
            fail(f"{event['type']} {event['eventId']} is {len(value)} bytes, more than {MAX_EVENT_BYTES}: cut it to fit first")
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
    """Polls GetReplayHistory (every 200 ms) until the run is replayed, completed, with at least its own rounds."""
    request = pb.GetReplayHistoryRequest(
        tenant_id=run.tenant_id, conversation_id=run.conversation_id, format=pb.HISTORY_FORMAT_OPENAI_CHAT
    )
    deadline = time.monotonic() + timeout_seconds
    seen = "no answer yet"
    while True:
        try:
            response = stub.GetReplayHistory(request, metadata=metadata, timeout=10)
            turn = next((t for t in response.turns if t.run_id == run.run_id), None)
            if turn is not None and turn.status == pb.RUN_STATUS_COMPLETED and len(turn.rounds) >= expected_rounds:
                return response, turn
            if turn is None:
                seen = "the run is not replayed yet"
            else:
                seen = f"run {pb.RunStatus.Name(turn.status)} with {len(turn.rounds)} round(s)"
            omitted = omissions_of(response, run)
            if omitted:
                seen += "; omitted: " + ", ".join(omitted)
        except grpc.RpcError as error:
            if error.code() not in RETRIABLE:
                fail(rpc_failure("GetReplayHistory", error))
            seen = f"{error.code().name}: {error.details()}"
        if time.monotonic() >= deadline:
            fail(
                f"run {run.run_id} was not replayed with its {expected_rounds} round(s) within {timeout_seconds:g}s "
                f"(last seen: {seen}). Is the service recording this topic, and listening there?"
            )
        time.sleep(0.2)


def omissions_of(response, run: RunScope) -> list:
    """The calls of the run that replay left out, and why."""
    return [
        f"{o.tool_name}#{o.round_index}.{o.sequence_index} ({pb.OmissionReason.Name(o.reason)})"
        for o in response.omitted
        if o.run_id == run.run_id
    ]


def print_messages(label: str, turn, elapsed: float) -> None:
    """The turn's provider-ready messages, long contents shortened for the terminal."""
    messages = json.loads(turn.messages_json)
    for m in messages:
        content = m.get("content")
        if isinstance(content, str) and len(content) > 200:
            m["content"] = f"{content[:80]}[… {len(content) - 120:,} chars not printed …]{content[-40:]}"
    after = f", after {turn.after_message_id}" if turn.after_message_id else ""
    print(f"{label} replayed after {elapsed:.1f}s; the messages to send before {turn.assistant_message_id}{after}:")
    print(json.dumps(messages, indent=2, ensure_ascii=False))


def same_result(replayed: str, expected: Any) -> bool:
    # A string result is replayed as it is; a JSON result serialized to a string.
    if isinstance(expected, str):
        return replayed == expected
    try:
        return json.loads(replayed) == expected
    except ValueError:
        return False


def check_rounds(turn, rounds: list) -> list:
    """What is wrong with the replayed rounds: calls, results and their order, and the OpenAI messages."""
    problems = []
    got = [(r.round_index, [c.tool_call_id for c in r.calls]) for r in turn.rounds]
    want = [(calls[0].round_index, [c.tool_call_id for c in calls]) for calls in rounds]
    if got != want:
        problems.append(f"rounds and calls are {got}, expected {want}")
        return problems
    for replayed_round, calls in zip(turn.rounds, rounds, strict=True):
        for replayed, call in zip(replayed_round.calls, calls, strict=True):
            label = f"{call.tool_name} ({call.tool_call_id})"
            if replayed.tool_name != call.tool_name or replayed.sequence_index != call.sequence_index:
                problems.append(f"{label}: replayed as {replayed.tool_name} #{replayed.sequence_index}")
            if json.loads(replayed.arguments_json or "{}") != call.arguments:
                problems.append(f"{label}: arguments {replayed.arguments_json}")
            if replayed.is_error or replayed.expired or not same_result(replayed.result, call.result):
                problems.append(f"{label}: result {replayed.result[:200]!r} (is_error={replayed.is_error}, expired={replayed.expired})")

    # The provider-ready messages: per round, one assistant message with its
    # tool_calls, then one tool message per call, in the same order.
    try:
        messages = json.loads(turn.messages_json)
    except ValueError as error:
        return [*problems, f"messages_json is not JSON: {error}"]
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
        call_id = m.get("tool_call_id")
        if m.get("role") == "tool" and call_id in results and not same_result(m.get("content", ""), results[call_id]):
            problems.append(f"tool message {call_id}: content {m.get('content', '')[:200]!r}")
    return problems


def check_turn(turn, rounds: list, assistant_message_id: str) -> list:
    """What is wrong with a run's replayed turn: its assistant message id, then its rounds."""
    problems = []
    if turn.assistant_message_id != assistant_message_id:
        problems.append(f"assistant_message_id is {turn.assistant_message_id!r}, not {assistant_message_id!r}")
    return problems + check_rounds(turn, rounds)


def check_after_message(turn, run: RunScope) -> list:
    """The turn goes after the host's message that started its run (the events' userMessageId)."""
    if turn.after_message_id == run.user_message_id:
        return []
    return [f"run {run.run_id}: after_message_id is {turn.after_message_id!r}, not its userMessageId {run.user_message_id!r}"]


def print_pending_approvals(response, when: str) -> None:
    print(f"pending approvals {when}: {len(response.pending_approvals)}")
    for p in response.pending_approvals:
        print(
            f"  - {p.tool_name} {p.tool_call_id} of run {p.run_id} (round {p.round_index}, call {p.sequence_index}), "
            f"arguments {p.arguments_json}: {p.reason}"
        )


def check_pending_approval(response, run: RunScope, call: ToolStep) -> list:
    """Between the runs: the refund is left out of the replay and listed as waiting for approval."""
    problems = []
    pending = [(p.run_id, p.tool_call_id, p.tool_name, p.round_index, p.sequence_index, p.reason) for p in response.pending_approvals]
    want = [(run.run_id, call.tool_call_id, call.tool_name, call.round_index, call.sequence_index, APPROVAL_REASON)]
    if pending != want:
        problems.append(f"pending_approvals are {pending}, expected {want}")
    elif json.loads(response.pending_approvals[0].arguments_json) != call.arguments:
        problems.append(f"the pending approval's arguments are {response.pending_approvals[0].arguments_json}")
    reasons = [pb.OmissionReason.Name(o.reason) for o in response.omitted if o.tool_call_id == call.tool_call_id]
    if reasons != ["OMISSION_REASON_AWAITING_APPROVAL"]:
        problems.append(f"{call.label()} is omitted with {reasons}, expected ['OMISSION_REASON_AWAITING_APPROVAL']")
    return problems


def check_resumed_turn(turn, response, run1: RunScope, refund: ToolStep) -> list:
    """After run 2: the refund's round comes first in run 2's turn, resumed from run 1, approved and answered."""
    problems = []
    if response.pending_approvals:
        problems.append(f"{len(response.pending_approvals)} approval(s) still pending after the decision")
    if not turn.rounds:
        return [*problems, "run 2's turn has no rounds"]
    first = turn.rounds[0]
    if first.resumed_from_run_id != run1.run_id:
        problems.append(f"run 2's first round is resumed from {first.resumed_from_run_id!r}, expected run 1 {run1.run_id!r}")
    elif first.calls and first.calls[0].approval != pb.APPROVAL_STATUS_APPROVED:
        problems.append(f"{refund.label()} is replayed with approval {pb.ApprovalStatus.Name(first.calls[0].approval)}")
    return problems


def recorded_events_of(stub, metadata: list, last: RunScope, timeout_seconds: float) -> list | None:
    """The conversation's events as recorded (SubscribeToolEvents from the start), up to the RunCompleted of `last`.

    None if the token may not subscribe.
    """
    request = pb.SubscribeToolEventsRequest(tenant_id=last.tenant_id, from_position=0)
    stream = stub.SubscribeToolEvents(request, metadata=metadata, timeout=timeout_seconds)
    recorded = []
    try:
        for event in stream:
            if event.conversation_id == last.conversation_id:
                recorded.append(event)
                if event.run_id == last.run_id and event.type == "RunCompleted":
                    return recorded
    except grpc.RpcError as error:
        if error.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNIMPLEMENTED):
            print(f"(recorded-once check skipped: SubscribeToolEvents answered {error.code().name}: {error.details()})")
            return None
        fail(rpc_failure("SubscribeToolEvents", error))
    finally:
        stream.cancel()
    fail(f"SubscribeToolEvents ended before the RunCompleted of run {last.run_id}")
    return None


def step_of(event: dict) -> tuple:
    """What makes an event the same step of its run (as the event id is derived)."""
    if "toolCallId" in event:  # a call, a result, an approval request or a decision
        return (event["runId"], event["type"], event["roundIndex"], event["sequenceIndex"], event["toolCallId"])
    return (event["runId"], event["type"])


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
    tenant_id = os.environ.get("TENANT_ID") or f"py-tenant-{unique}"
    conversation_id = os.environ.get("CONVERSATION_ID") or f"py-conv-{unique}"
    channel = os.environ.get("CHANNEL") or "support"
    run_id = os.environ.get("RUN_ID") or f"py-run-{unique}"
    # Run 1 is started by the user's message; run 2 by the message in which the person approved the refund.
    run1 = RunScope(tenant_id, conversation_id, channel, run_id, f"msg-user-{run_id}")
    run2 = RunScope(tenant_id, conversation_id, channel, f"{run_id}-resumed", f"msg-approval-{run_id}")
    brokers = os.environ.get("KAFKA_BROKERS") or "127.0.0.1:9092"
    topic = os.environ.get("TOOL_EVENTS_TOPIC") or "agent.tool-events"
    address = os.environ.get("TOOLHISTORY_ADDRESS") or "127.0.0.1:50051"
    token = os.environ.get("TOOLHISTORY_TOKEN") or ""
    try:
        replay_timeout = float(os.environ.get("REPLAY_TIMEOUT_SECONDS") or "60")
    except ValueError:
        fail("REPLAY_TIMEOUT_SECONDS must be a number of seconds", 2)

    print(
        f"run {run1.run_id}: tenant {tenant_id}, conversation {conversation_id}, channel {channel}; "
        f"publishing to {topic} on {brokers}"
    )
    rounds = scripted_rounds(run1)
    refund = refund_call(run1)
    history = order_history_call(run2)
    publisher = EventPublisher(brokers, topic, schema_checker())
    published: list = []
    # What the service replays otherwise than the contract says about approvals and
    # userMessageId; reported at the end, once both runs are published.
    contract_problems: list = []

    def publish_all(events: list, what: str) -> None:
        for event in events:
            publisher.publish(event)
        publisher.flush()
        published.extend(events)
        print(f"published {what}: {len(events)} events, delivery confirmed")

    # --- run 1: three rounds; the last one's call waits for a person ---------
    print(f"run 1 ({run1.run_id}), started by the user's message {run1.user_message_id}")
    publish_all(round_events(run1, rounds[0]), "round 0 (2 parallel calls and their results)")
    # A worker that crashed after round 0 and redoes it publishes the same
    # steps again, with new timestamps but the same event ids: recorded once.
    publish_all(round_events(run1, rounds[0]), "round 0 again, as a retry (same event ids)")
    publish_all(round_events(run1, rounds[1]), "round 1 (1 call and its result)")
    publish_all(
        [tool_call_requested(run1, refund), tool_approval_requested(run1, refund, APPROVAL_REASON)],
        "round 2 (issue_refund, which waits for a person's approval)",
    )
    # Three service (LLM) calls: one asked for round 0, one for round 1, one for
    # the refund. The host showed its assistant message and asked a person.
    usage1 = [
        {"inputTokens": 812, "outputTokens": 46, "model": "example-model"},
        {"inputTokens": 1024, "outputTokens": 31, "model": "example-model"},
        {"inputTokens": 1187, "outputTokens": 58, "model": "example-model"},
    ]
    publish_all([run_completed(run1, f"msg-{run1.run_id}", "awaiting_approval", usage1)], "RunCompleted (finishReason awaiting_approval)")

    metadata = [("authorization", f"Bearer {token}")] if token else []
    # Plaintext, as to a service on loopback; a proxy from the environment would not reach it.
    # A replay carries every replayed result: room for a few of MAX_EVENT_BYTES (gRPC's default is 4 MiB).
    options = [("grpc.enable_http_proxy", 0), ("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    with grpc.insecure_channel(address, options=options) as grpc_channel:
        stub = pb_grpc.ToolHistoryStub(grpc_channel)
        print(f"waiting for the replay of run 1 at {address} (up to {replay_timeout:g}s)")
        started = time.monotonic()
        response, turn = await_replay(stub, metadata, run1, len(rounds), replay_timeout)
        print_messages("run 1", turn, time.monotonic() - started)
        problems = check_turn(turn, rounds, f"msg-{run1.run_id}")
        if problems:
            fail("the replay of run 1 is not what was published:\n  " + "\n  ".join(problems))
        print(
            f"run 1 replays {sum(len(r.calls) for r in turn.rounds)} calls paired with their results, in order: "
            + ", ".join(f"{c.tool_name}#{r.round_index}.{c.sequence_index}" for r in turn.rounds for c in r.calls)
        )
        contract_problems += check_after_message(turn, run1)
        # The host asks a person about each pending approval (again, after a restart).
        print_pending_approvals(response, "after run 1")
        print(f"left out of run 1: {', '.join(omissions_of(response, run1)) or 'nothing'}")
        if any(t.run_id == run2.run_id for t in response.turns):
            # This script ran before with the same ids: run 2 is recorded, the refund decided.
            print(f"(run 2 was recorded before: {refund.label()} is no longer pending)")
        else:
            contract_problems += check_pending_approval(response, run1, refund)

        # --- run 2: the person approved; the host resumes the conversation ----
        print(f"the person approved {refund.label()}; run 2 ({run2.run_id}) is started by their message {run2.user_message_id}")
        # The decision and the tool's result belong to run 2, with the ids of the call made in run 1.
        answered = [
            tool_approval_decided(run2, refund, True, DECISION_REASON, DECIDED_BY),
            tool_result_received(run2, refund),
        ]
        publish_all(answered, "the decision and issue_refund's result (the call's ids, run 2)")
        history_call = tool_call_requested(run2, history)
        cut = fit_result(tool_result_received(run2, history))
        publish_all(
            [history_call, cut],
            f"round 0 (export_order_history, its result cut from {cut['originalBytes']:,} bytes to fit the event limit)",
        )
        # Two service calls: one with the refund's result asked for round 0, one answered.
        usage2 = [
            {"inputTokens": 1402, "outputTokens": 40, "model": "example-model"},
            {"inputTokens": 9051, "outputTokens": 120, "model": "example-model"},
        ]
        publish_all([run_completed(run2, f"msg-{run2.run_id}", "stop", usage2)], "RunCompleted (finishReason stop)")

        print(f"waiting for the replay of run 2 (up to {replay_timeout:g}s)")
        started = time.monotonic()
        response, turn = await_replay(stub, metadata, run2, 1, replay_timeout)
        print_messages("run 2", turn, time.monotonic() - started)
        print_pending_approvals(response, "after run 2")
        print(f"left out of run 2: {', '.join(omissions_of(response, run2)) or 'nothing'}")
        # The refund's round first (resumed from run 1), then run 2's own round with the cut result.
        history_as_cut = ToolStep(0, 0, history.tool_call_id, history.tool_name, history.arguments, cut["result"])
        contract_problems += check_resumed_turn(turn, response, run1, refund)
        contract_problems += check_after_message(turn, run2)
        contract_problems += check_turn(turn, [[refund], [history_as_cut]], f"msg-{run2.run_id}")

        recorded = recorded_events_of(stub, metadata, run2, timeout_seconds=30)
        if recorded is not None:
            problems = check_recorded_once(published, recorded)
            if problems:
                fail("publishing a step twice did not record it once:\n  " + "\n  ".join(problems))
            print(f"recorded once each: {len(published)} events published, {len(recorded)} recorded")

    if contract_problems:
        fail("the replay is not what the contract says:\n  " + "\n  ".join(contract_problems))
    print(
        f"OK: run {run1.run_id} replays 3 calls paired with their results and waits for approval of {refund.label()}; "
        f"run {run2.run_id} resumes it, approved, then replays {history.label()} cut to fit"
    )


if __name__ == "__main__":
    main()
