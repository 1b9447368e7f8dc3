"""A toolhistory agent worker in Python, with the `toolhistory-client` package.

Two runs of one support conversation, as a worker publishes them, and the history a model may see again, as the
worker asks for it at the start of every turn:

  run 1, started by the user's message:
    round 0: two parallel tool calls and their results, published twice (a worker retrying after a crash
             publishes the same steps again: their derived event ids are the same, so each is recorded once)
    round 1: one tool call and its result
    round 2: issue_refund, which waits for a person's approval; the run completes there
  replay: run 1's 3 answered calls; the refund is pending
  run 2, started by the person's answer:
    the decision and the refund's result, with the ids of the call made in run 1
    round 0: a tool whose result is larger than an event may be: the publisher cuts it to fit
  replay: run 2 resumes the refund's round, then its own round; spliced into the host's conversation

It exits 0 only if the service replays what was published as the contract says, 1 otherwise.

Settings (environment):
  KAFKA_BROKERS          127.0.0.1:9092 (comma-separated host:port)
  TOOL_EVENTS_TOPIC      agent.tool-events
  MAX_EVENT_BYTES        the service's event limit, 1048576 by default
  TOOLHISTORY_ADDRESS    127.0.0.1:50051 (host:port of the gRPC API, plaintext)
  TOOLHISTORY_TOKEN      optional bearer token
  TENANT_ID, CONVERSATION_ID, RUN_ID
                         new unique ones by default; run 2 is RUN_ID-resumed
  CHANNEL                support
  REPLAY_TIMEOUT_SECONDS 60 (the replay's deadline: how long it may wait for the run to be recorded)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc

from toolhistory.client import ToolHistoryClient
from toolhistory.errors import InvalidToolEventError, PublishError, ToolHistoryError
from toolhistory.events import JsonObject, JsonValue, PublishedEvent, RunScope, TokenUsage, ToolCall, ToolResult
from toolhistory.publisher import DEFAULT_MAX_EVENT_BYTES, RunPublisher, ToolEventPublisher
from toolhistory.replay import ReplayedTurn, ReplayHistory
from toolhistory.splice import splice_history
from toolhistory.truncation import TRUNCATION_TAIL
from toolhistory.v1 import toolhistory_pb2

APPROVAL_REASON = "refunds over 100 EUR need a person's approval"


def fail(message: str) -> NoReturn:
    print(f"agent.py: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


@dataclass(frozen=True)
class Step:
    """One tool call of the scripted model, and what its tool answered."""

    round_index: int
    sequence_index: int
    tool_name: str
    arguments: JsonObject
    result: JsonValue
    run_id: str  # the run the model asked in: the call's id is made from it

    @property
    def tool_call_id(self) -> str:
        # Stands in for the id the LLM gives a call; a real worker keeps that one, so a retried step keeps it too.
        digest = hashlib.sha256(f"{self.run_id}/{self.round_index}/{self.sequence_index}".encode()).hexdigest()
        return f"call_{digest[:24]}"

    @property
    def label(self) -> str:
        return f"{self.tool_name}#{self.round_index}.{self.sequence_index}"

    def call(self) -> ToolCall:
        return ToolCall(self.round_index, self.sequence_index, self.tool_call_id, self.tool_name, self.arguments)

    def answer(self) -> ToolResult:
        return ToolResult(self.round_index, self.sequence_index, self.tool_call_id, self.result)


def publish_round(run: RunPublisher, steps: list[Step]) -> list[PublishedEvent]:
    """A round's calls, then their results as the parallel tools finish (here: last first)."""
    return run.tool_calls([s.call() for s in steps]) + run.tool_results([s.answer() for s in reversed(steps)])


def replay_of(client: ToolHistoryClient, run: RunPublisher, timeout: float) -> tuple[ReplayHistory, ReplayedTurn]:
    """The conversation's replay, read once, right after the run was published: given the run's consistency token
    (where its last event landed), the service answers once everything the run published is recorded
    (read-your-writes), so the run is there, completed. The token is what a worker would store with the answer
    for a next turn in another process; in this one the client would send it by itself."""
    scope = run.scope
    try:
        history = client.get_replay_history(
            tenant_id=scope.tenant_id,
            conversation_id=scope.conversation_id,
            format="openai",
            consistency_token=run.consistency_token,
            timeout=timeout,
        )
    except ToolHistoryError as error:
        fail(f"run {scope.run_id} was not replayed within {timeout:g}s: {error}")
    turn = next((t for t in history.turns if t.run_id == scope.run_id), None)
    if turn is None or turn.status != toolhistory_pb2.RUN_STATUS_COMPLETED:
        seen = "not replayed" if turn is None else toolhistory_pb2.RunStatus.Name(turn.status)
        fail(f"run {scope.run_id} is not replayed as completed right after it was published ({seen})")
    return history, turn


def print_messages(label: str, turn: ReplayedTurn, elapsed: float) -> None:
    """The turn's OpenAI messages, long contents shortened for the terminal."""
    messages = [dict(m) for m in turn.messages]
    for m in messages:
        content = m.get("content")
        if isinstance(content, str) and len(content) > 200:
            m["content"] = f"{content[:80]}[… {len(content) - 120:,} chars not printed …]{content[-40:]}"
    print(
        f"{label} replayed after {elapsed:.1f}s; the messages to send before {turn.assistant_message_id}, "
        f"after {turn.after_message_id}:"
    )
    print(json.dumps(messages, indent=2, ensure_ascii=False))


def as_text(result: JsonValue) -> str:
    """A result as replay gives it back: a string as it is, any other value as its JSON text."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, separators=(",", ":"))


def same_result(replayed: str, result: JsonValue) -> bool:
    if TRUNCATION_TAIL.search(replayed):  # cut to fit: the start of the result's text, then the marker
        kept = TRUNCATION_TAIL.sub("", replayed)
        return len(kept) < len(as_text(result)) and as_text(result).startswith(kept)
    return replayed == result if isinstance(result, str) else json.loads(replayed) == result


def turn_problems(turn: ReplayedTurn, run: RunScope, assistant_message_id: str, rounds: list[list[Step]]) -> list[str]:
    """What differs between a replayed turn and what was published: ids, calls, results, and the OpenAI messages."""
    problems = []
    if (turn.assistant_message_id, turn.after_message_id) != (assistant_message_id, run.user_message_id):
        problems.append(f"turn placed before/after {turn.assistant_message_id!r}/{turn.after_message_id!r}")
    got = [[(c.tool_call_id, c.tool_name, json.loads(c.arguments_json)) for c in r.calls] for r in turn.rounds]
    want = [[(s.tool_call_id, s.tool_name, s.arguments) for s in steps] for steps in rounds]
    if got != want:
        return [*problems, f"calls are {got}, expected {want}"]
    # Per round: one assistant message with its tool_calls, then one tool message per call, in order.
    steps = {s.tool_call_id: s for r in rounds for s in r}
    shape = [
        [tc["id"] for tc in m["tool_calls"]] if m["role"] == "assistant" else m["tool_call_id"] for m in turn.messages
    ]
    want_shape = [x for r in rounds for x in [[s.tool_call_id for s in r], *[s.tool_call_id for s in r]]]
    if shape != want_shape:
        problems.append(f"messages are {shape}, expected {want_shape}")
    for m in turn.messages:
        if m["role"] == "tool" and not same_result(m["content"], steps[m["tool_call_id"]].result):
            problems.append(f"{steps[m['tool_call_id']].label}: result {m['content'][:200]!r}")
    return problems


def recorded_events(client: ToolHistoryClient, last: RunScope) -> list[str] | None:
    """The ids of the conversation's recorded events, up to the RunCompleted of `last`; None if the token may not
    subscribe."""
    ids = []
    try:
        with contextlib.closing(client.subscribe(tenant_id=last.tenant_id)) as events:
            for event in events:
                if event.conversation_id == last.conversation_id:
                    ids.append(event.event_id)
                    if event.run_id == last.run_id and event.type == "RunCompleted":
                        return ids
    except ToolHistoryError as error:
        if error.code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNIMPLEMENTED):
            print(f"(recorded-once check skipped: {error})")
            return None
        raise
    fail(f"the subscription ended before the RunCompleted of run {last.run_id}")


def main() -> None:
    env = os.environ.get
    unique = uuid.uuid4().hex[:12]
    run_id = env("RUN_ID") or f"py-run-{unique}"
    ids = {
        "tenant_id": env("TENANT_ID") or f"py-tenant-{unique}",
        "conversation_id": env("CONVERSATION_ID") or f"py-conv-{unique}",
        "channel": env("CHANNEL") or "support",
    }
    replay_timeout = float(env("REPLAY_TIMEOUT_SECONDS") or "60")
    address = env("TOOLHISTORY_ADDRESS") or "127.0.0.1:50051"

    lookups = [
        Step(
            0,
            0,
            "lookup_order",
            {"orderId": "A-1001"},
            {"status": "shipped", "carrier": "DHL", "parcel": "P-77"},
            run_id,
        ),
        Step(0, 1, "lookup_customer", {"customerId": "C-7"}, {"name": "Ada", "tier": "gold"}, run_id),
    ]
    tracking = [Step(1, 0, "track_parcel", {"parcel": "P-77"}, "in transit, arriving tomorrow", run_id)]
    refund = Step(
        2,
        0,
        "issue_refund",
        {"orderId": "A-1001", "amountEur": 129.9},
        {"refundId": "R-501", "status": "refunded"},
        run_id,
    )
    # 1.3 MB of JSON: more than an event may carry.
    scans: list[JsonValue] = [
        {"scan": n, "hub": "Leipzig", "status": "sorted, on the next truck"} for n in range(20_000)
    ]
    history = Step(
        0, 0, "export_order_history", {"orderId": "A-1001"}, {"orderId": "A-1001", "scans": scans}, f"{run_id}-resumed"
    )

    publisher = ToolEventPublisher(
        brokers=(env("KAFKA_BROKERS") or "127.0.0.1:9092").split(","),
        topic=env("TOOL_EVENTS_TOPIC") or "agent.tool-events",
        client_id="toolhistory-python-agent",
        # The service's limit: a larger event would be dead-lettered, so the publisher cuts payloads to fit it.
        max_event_bytes=int(env("MAX_EVENT_BYTES") or DEFAULT_MAX_EVENT_BYTES),
    )
    client = ToolHistoryClient(
        address,
        token=env("TOOLHISTORY_TOKEN") or None,
        # The service is on loopback here: a proxy from the environment would not reach it.
        channel_options=[("grpc.enable_http_proxy", 0)],
    )
    with publisher, client:
        # --- run 1: three rounds; the last one's call waits for a person ---
        run1 = publisher.run(**ids, run_id=run_id, user_message_id=f"msg-user-{run_id}")
        print(f"run 1 ({run_id}), started by the user's message {run1.scope.user_message_id}")
        published = publish_round(run1, lookups)
        # A worker that crashed after round 0 and redoes it: the steps' derived event ids are the same again.
        again = publish_round(run1, lookups)
        if [e.event_id for e in again] != [e.event_id for e in published]:
            fail("publishing round 0 again gave other event ids")
        print(f"round 0 published again, as a worker retrying after a crash would: the same {len(again)} event ids")
        published += again + publish_round(run1, tracking)
        published += run1.tool_calls([refund.call()])
        published.append(
            run1.approval_requested(
                round_index=2, sequence_index=0, tool_call_id=refund.tool_call_id, reason=APPROVAL_REASON
            )
        )
        # One LLM call per round; the host showed the refund's question and asked a person.
        usage = [
            TokenUsage(812, 46, "example-model"),
            TokenUsage(1024, 31, "example-model"),
            TokenUsage(1187, 58, "example-model"),
        ]
        published.append(
            run1.complete(assistant_message_id=f"msg-{run_id}", finish_reason="awaiting_approval", usage=usage)
        )
        print(f"published run 1: {len(published)} events, each acknowledged by the broker")

        started = time.monotonic()
        replay, turn = replay_of(client, run1, replay_timeout)
        print_messages("run 1", turn, time.monotonic() - started)
        problems = turn_problems(turn, run1.scope, f"msg-{run_id}", [lookups, tracking])
        if problems:
            fail("the replay of run 1 is not what was published:\n  " + "\n  ".join(problems))
        labels = [f"{c.tool_name}#{r.round_index}.{c.sequence_index}" for r in turn.rounds for c in r.calls]
        print(f"run 1 replays {len(labels)} calls paired with their results, in order: {', '.join(labels)}")
        # What the host asks the person about (again, after a restart).
        print(f"pending approvals after run 1: {len(replay.pending_approvals)}")
        for p in replay.pending_approvals:
            print(
                f"  - {p.tool_name} {p.tool_call_id} of run {p.run_id} (round {p.round_index}, "
                f"call {p.sequence_index}), arguments {p.arguments_json}: {p.reason}"
            )
        omitted = [
            f"{o.tool_name}#{o.round_index}.{o.sequence_index} ({toolhistory_pb2.OmissionReason.Name(o.reason)})"
            for o in replay.omitted
            if o.run_id == run_id
        ]
        print(f"left out of run 1: {', '.join(omitted) or 'nothing'}")
        resumed_before = any(t.run_id == f"{run_id}-resumed" for t in replay.turns)
        pending = [(p.tool_call_id, p.reason) for p in replay.pending_approvals]
        if not resumed_before and pending != [(refund.tool_call_id, APPROVAL_REASON)]:
            fail(f"the refund is not pending approval after run 1: {pending}")

        # --- run 2: the person approved; the host resumes the conversation ---
        run2 = publisher.run(**ids, run_id=f"{run_id}-resumed", user_message_id=f"msg-approval-{run_id}")
        print(
            f"the person approved {refund.label}; run 2 ({run2.scope.run_id}) starts from {run2.scope.user_message_id}"
        )
        # The decision and the result belong to run 2, with the ids of the call made in run 1.
        published.append(
            run2.approval_decided(
                round_index=2,
                sequence_index=0,
                tool_call_id=refund.tool_call_id,
                approved=True,
                reason="the parcel was lost in transit",
                decided_by="support-lead",
            )
        )
        published += run2.tool_results([refund.answer()])
        published += publish_round(run2, [history])
        size = len(as_text(history.result).encode())
        print(f"{history.label}'s result is {size:,} bytes: the publisher cut it to fit max_event_bytes")
        usage = [TokenUsage(1402, 40, "example-model"), TokenUsage(9051, 120, "example-model")]
        published.append(run2.complete(assistant_message_id=f"msg-{run_id}-resumed", usage=usage))

        started = time.monotonic()
        replay, turn = replay_of(client, run2, replay_timeout)
        print_messages("run 2", turn, time.monotonic() - started)
        problems = turn_problems(turn, run2.scope, f"msg-{run_id}-resumed", [[refund], [history]])
        first = turn.rounds[0]
        if (first.resumed_from_run_id, first.calls[0].approval) != (run_id, toolhistory_pb2.APPROVAL_STATUS_APPROVED):
            problems.append(f"the refund's round is not resumed from run 1, approved: {first}")
        if replay.pending_approvals:
            problems.append(f"still pending: {list(replay.pending_approvals)}")
        if problems:
            fail("the replay of run 2 is not what was published:\n  " + "\n  ".join(problems))

        # The model's next input: the host's own messages, each run's tool calls spliced in where the model made them.
        host_messages: list[dict[str, Any]] = [
            {"id": f"msg-user-{run_id}", "role": "user", "content": "My parcel never came. Refund order A-1001?"},
            {"id": f"msg-{run_id}", "role": "assistant", "content": "The refund of 129.90 EUR needs approval."},
            {"id": f"msg-approval-{run_id}", "role": "user", "content": "(support-lead approved the refund)"},
            {"id": f"msg-{run_id}-resumed", "role": "assistant", "content": "Refunded: R-501."},
        ]
        spliced = splice_history(host_messages, replay, id_of=lambda m: m.get("id"))
        roles = [m["role"] for m in spliced]
        print(f"the next turn's input, spliced: {len(spliced)} messages: {' '.join(roles)}")
        tool_round = ["assistant", "tool"]
        want = ["user", *tool_round, "tool", *tool_round, "assistant", "user", *tool_round, *tool_round, "assistant"]
        if roles != want:
            fail(f"the spliced conversation is {roles}, expected {want}")

        # Every step once, under the id it was published with, however often it was published.
        recorded = recorded_events(client, run2.scope)
        if recorded is not None:
            if sorted(recorded) != sorted({e.event_id for e in published}):
                fail(f"recorded {len(recorded)} events, not each of the {len(published)} published once")
            print(f"recorded once each: {len(published)} events published, {len(recorded)} recorded")

    print(
        f"OK: run {run_id} replays 3 calls paired with their results and waits for approval of {refund.label}; "
        f"run {run_id}-resumed resumes it, approved, then replays {history.label} cut to fit"
    )


if __name__ == "__main__":
    try:
        main()
    except (InvalidToolEventError, PublishError, ToolHistoryError) as error:
        fail(str(error))
