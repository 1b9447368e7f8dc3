"""Read-your-writes, the host's branch and forks against the running service: what this process published is in
its next read at once (no polling anywhere in this file), a token carries that to another process, a read keeps to
the host's current branch, and a fork starts with the source's history up to a message."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING

import grpc
import pytest

from toolhistory.consistency import last_consistency_token, parse_consistency_token
from toolhistory.errors import ToolHistoryError
from toolhistory.events import RunFailure
from toolhistory.v1 import toolhistory_pb2 as pb

from conftest import Stack

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolhistory.aio import AsyncToolHistoryClient
    from toolhistory.client import ToolHistoryClient
    from toolhistory.events import JsonObject, PublishedEvent
    from toolhistory.publisher import ToolEventPublisher

pytestmark = pytest.mark.integration

CHANNEL = "web"
READS = 50


def publish_run(
    publisher: ToolEventPublisher,
    stack: Stack,
    conversation_id: str,
    run_id: str,
    *,
    user_message_id: str,
    assistant_message_id: str | None,
    rounds: int = 1,
) -> PublishedEvent:
    """A run of `rounds` rounds of one call and its result each, completed with `assistant_message_id` (None: the
    run failed). The first round's call id is `call_<run_id>`."""
    run = publisher.run(
        tenant_id=stack.tenant,
        conversation_id=conversation_id,
        channel=CHANNEL,
        run_id=run_id,
        user_message_id=user_message_id,
    )
    for round_index in range(rounds):
        call_id = f"call_{run_id}" if round_index == 0 else f"call_{run_id}_{round_index}"
        arguments: JsonObject = {"run": run_id, "round": round_index}
        run.tool_call(
            round_index=round_index,
            sequence_index=0,
            tool_call_id=call_id,
            tool_name="lookup_order",
            arguments=arguments,
        )
        run.tool_result(
            round_index=round_index, sequence_index=0, tool_call_id=call_id, result={"status": f"shipped-{run_id}"}
        )
    if assistant_message_id is None:
        return run.fail(error=RunFailure("provider_error", "the model went away"))
    return run.complete(assistant_message_id=assistant_message_id)


# ---- read-your-writes ---------------------------------------------------------------------------------------------


def test_a_run_published_is_in_the_next_read_every_time(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    missed: list[tuple[int, list[str]]] = []
    for n in range(READS):
        conversation, run_id = ids("ryw"), f"run-{n}"
        ended = publish_run(
            publisher, stack, conversation, run_id, user_message_id=f"u{n}", assistant_message_id=f"a{n}"
        )
        assert parse_consistency_token(ended.consistency_token).topic == stack.topic  # type: ignore[union-attr]
        # No token given: the client sends the one this process published last for the conversation.
        history = client.get_replay_history(tenant_id=stack.tenant, conversation_id=conversation)
        if [(t.run_id, len(t.rounds)) for t in history.turns] != [(run_id, 1)]:
            missed.append((n, [t.run_id for t in history.turns]))
    assert missed == []


def test_listings_searches_and_watches_see_what_was_just_published(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    for n in range(5):
        conversation = ids("ryw-reads")
        publish_run(publisher, stack, conversation, f"run-{n}", user_message_id="u1", assistant_message_id="a1")
        listed = list(client.list_tool_invocations(tenant_id=stack.tenant, conversation_id=conversation))
        assert [(i.run_id, i.status) for i in listed] == [(f"run-{n}", pb.INVOCATION_STATUS_SUCCEEDED)]
        found = client.search_tool_history(
            tenant_id=stack.tenant, conversation_id=conversation, query=f"shipped-run-{n}", match="substring"
        )
        assert [hit.invocation.run_id for hit in found.hits] == [f"run-{n}"]
        watch = client.watch_conversation(tenant_id=stack.tenant, conversation_id=conversation)
        try:
            snapshot: list[pb.WatchedInvocation] = []
            for change in watch:
                snapshot.extend(change.snapshot.invocations)
                if change.snapshot.complete:
                    break
        finally:
            watch.close()
        assert [(w.invocation.run_id, w.run_status) for w in snapshot] == [(f"run-{n}", pb.RUN_STATUS_COMPLETED)]


async def test_the_async_client_reads_what_this_process_just_published(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    for n in range(10):
        conversation = ids("ryw-async")
        publish_run(publisher, stack, conversation, f"run-{n}", user_message_id="u1", assistant_message_id="a1")
        history = await aclient.get_replay_history(tenant_id=stack.tenant, conversation_id=conversation)
        assert [t.run_id for t in history.turns] == [f"run-{n}"]


def test_another_process_given_the_token_reads_the_run(
    stack: Stack, publisher: ToolEventPublisher, ids: Callable[[str], str]
) -> None:
    conversation = ids("ryw-carried")
    ended = publish_run(publisher, stack, conversation, "run-1", user_message_id="u1", assistant_message_id="a1")
    token = last_consistency_token(stack.tenant, conversation)
    assert token == ended.consistency_token
    # A reader that published nothing itself: it has only the token the host carried (e.g. in its message row).
    reader = """
import json, os, sys
from pathlib import Path
from toolhistory import ToolHistoryClient, TlsConfig
ca = os.environ.get("TOOLHISTORY_CA_FILE")
tls = TlsConfig(root_certificates=Path(ca).read_bytes()) if ca else False
with ToolHistoryClient(os.environ["TOOLHISTORY_ADDRESS"], token=os.environ.get("TOOLHISTORY_TOKEN"), tls=tls) as client:
    history = client.get_replay_history(
        tenant_id=sys.argv[1], conversation_id=sys.argv[2], consistency_token=sys.argv[3]
    )
print(json.dumps([turn.run_id for turn in history.turns]))
"""
    read = subprocess.run(
        [sys.executable, "-c", reader, stack.tenant, conversation, token],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (read.returncode, read.stderr) == (0, "")
    assert json.loads(read.stdout) == ["run-1"]


def test_a_token_not_recorded_before_the_deadline_is_unavailable_not_an_empty_answer(
    stack: Stack, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    # An offset of the service's own topic far past anything published: recording cannot have reached it.
    token = f"ct1:k:{stack.topic}:0:9000000000"
    started = time.monotonic()
    with pytest.raises(ToolHistoryError) as failed:
        client.get_replay_history(
            tenant_id=stack.tenant, conversation_id=ids("ryw-future"), consistency_token=token, timeout=3
        )
    assert failed.value.code == grpc.StatusCode.UNAVAILABLE, failed.value.details
    assert token in failed.value.details
    assert time.monotonic() - started < 4.5  # the call's own deadline, not a wait of its own


def test_a_malformed_token_or_one_of_a_topic_the_service_does_not_consume_is_invalid_argument(
    stack: Stack, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    for token in ("not-a-token", "ct1:k:no-such-topic-here:0:1"):
        with pytest.raises(ToolHistoryError) as failed:
            client.get_replay_history(tenant_id=stack.tenant, conversation_id=ids("ryw-bad"), consistency_token=token)
        assert failed.value.code == grpc.StatusCode.INVALID_ARGUMENT, (token, failed.value.details)


# ---- the host's branch --------------------------------------------------------------------------------------------


def test_a_regenerated_answers_run_is_off_branch_and_the_new_one_replayed(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("branch-regen")
    publish_run(publisher, stack, conversation, "run-1", user_message_id="u1", assistant_message_id="a1")
    # The person asked for another answer to u1: a new run answers a1-bis; the host shows u1, a1-bis.
    publish_run(publisher, stack, conversation, "run-2", user_message_id="u1", assistant_message_id="a1-bis")
    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, branch_message_ids=["u1", "a1-bis"]
    )
    assert [t.run_id for t in history.turns] == ["run-2"]
    assert [(o.run_id, o.reason) for o in history.omitted] == [("run-1", pb.OMISSION_REASON_OFF_BRANCH)]
    # Without a branch, every run counts, as before.
    everything = client.get_replay_history(tenant_id=stack.tenant, conversation_id=conversation)
    assert [t.run_id for t in everything.turns] == ["run-1", "run-2"]


def test_an_edited_earlier_message_drops_every_later_run(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("branch-edit")
    publish_run(publisher, stack, conversation, "run-1", user_message_id="u1", assistant_message_id="a1")
    publish_run(publisher, stack, conversation, "run-2", user_message_id="u2", assistant_message_id="a2")
    publish_run(publisher, stack, conversation, "run-3", user_message_id="u3", assistant_message_id=None)  # failed
    # The person edited u2: the host's branch is u1, a1, u2-edited, and its answer.
    publish_run(publisher, stack, conversation, "run-4", user_message_id="u2-edited", assistant_message_id="a2-edited")
    host = [
        {"id": "u1", "role": "user", "content": "Where is A-1?"},
        {"id": "a1", "role": "assistant", "content": "Shipped."},
        {"id": "u2-edited", "role": "user", "content": "And B-2?"},
        {"id": "a2-edited", "role": "assistant", "content": "Shipped too."},
    ]
    history = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, branch_message_ids=[m["id"] for m in host]
    )
    assert [t.run_id for t in history.turns] == ["run-1", "run-4"]
    assert sorted((o.run_id, o.reason) for o in history.omitted) == [
        ("run-2", pb.OMISSION_REASON_OFF_BRANCH),
        ("run-3", pb.OMISSION_REASON_OFF_BRANCH),
    ]
    # spliced_history sends the host's ids itself and puts each kept run before its answer.
    spliced = client.spliced_history(tenant_id=stack.tenant, conversation_id=conversation, host_messages=host)
    shape = [m.get("id") or m["role"] for m in spliced]
    assert shape == ["u1", "assistant", "tool", "a1", "u2-edited", "assistant", "tool", "a2-edited"]
    tool_results = [json.loads(m["content"]) for m in spliced if m["role"] == "tool"]
    assert tool_results == [{"status": "shipped-run-1"}, {"status": "shipped-run-4"}]


def test_a_failed_run_is_on_the_branch_of_its_user_message(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    conversation = ids("branch-failed")
    publish_run(publisher, stack, conversation, "run-1", user_message_id="u1", assistant_message_id=None, rounds=2)
    on_branch = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, branch_message_ids=["u1"]
    )
    off_branch = client.get_replay_history(
        tenant_id=stack.tenant, conversation_id=conversation, branch_message_ids=["u0"]
    )
    # On the branch, the policy's own rule for a failed run applies (per_run: left out as failed); off it, the
    # branch decides first.
    assert {(o.run_id, o.reason) for o in on_branch.omitted} == {("run-1", pb.OMISSION_REASON_RUN_FAILED)}
    assert {(o.run_id, o.reason) for o in off_branch.omitted} == {("run-1", pb.OMISSION_REASON_OFF_BRANCH)}
    assert (len(on_branch.omitted), len(off_branch.omitted)) == (2, 2)  # both calls, each explained once


# ---- forks --------------------------------------------------------------------------------------------------------


def test_a_fork_replays_the_sources_history_up_to_the_message_and_nothing_after(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    source, fork = ids("fork-src"), ids("fork")
    for n in (1, 2, 3):
        publish_run(publisher, stack, source, f"run-{n}", user_message_id=f"u{n}", assistant_message_id=f"a{n}")
    # Right after publishing: the fork waits for the source's events this process published.
    forked = client.fork_conversation(
        tenant_id=stack.tenant, conversation_id=source, up_to_message_id="a2", new_conversation_id=fork
    )
    assert forked.copied_invocations == 2
    assert last_consistency_token(stack.tenant, fork) == forked.consistency_token
    # Right after forking: this process's read of the fork waits for the whole fork.
    history = client.get_replay_history(tenant_id=stack.tenant, conversation_id=fork)
    assert [(t.run_id, t.assistant_message_id) for t in history.turns] == [("run-1", "a1"), ("run-2", "a2")]
    copies = list(client.list_tool_invocations(tenant_id=stack.tenant, conversation_id=fork))
    assert [(c.tool_call_id, c.forked_from.conversation_id) for c in copies] == [
        ("call_run-1", source),
        ("call_run-2", source),
    ]
    assert all(c.HasField("forked_from") and c.forked_from.position > 0 for c in copies)
    source_history = client.get_replay_history(tenant_id=stack.tenant, conversation_id=source)
    assert [t.run_id for t in source_history.turns] == ["run-1", "run-2", "run-3"]


async def test_the_async_client_forks_at_a_user_message(
    stack: Stack, publisher: ToolEventPublisher, aclient: AsyncToolHistoryClient, ids: Callable[[str], str]
) -> None:
    source, fork = ids("fork-src"), ids("fork")
    for n in (1, 2):
        publish_run(publisher, stack, source, f"run-{n}", user_message_id=f"u{n}", assistant_message_id=f"a{n}")
    forked = await aclient.fork_conversation(
        tenant_id=stack.tenant, conversation_id=source, up_to_message_id="u1", new_conversation_id=fork
    )
    assert forked.copied_invocations == 1
    history = await aclient.get_replay_history(tenant_id=stack.tenant, conversation_id=fork)
    assert [t.run_id for t in history.turns] == ["run-1"]


def test_a_fork_at_an_unknown_message_is_not_found(
    stack: Stack, publisher: ToolEventPublisher, client: ToolHistoryClient, ids: Callable[[str], str]
) -> None:
    source = ids("fork-src")
    publish_run(publisher, stack, source, "run-1", user_message_id="u1", assistant_message_id="a1")
    with pytest.raises(ToolHistoryError) as failed:
        client.fork_conversation(
            tenant_id=stack.tenant, conversation_id=source, up_to_message_id="nope", new_conversation_id=ids("fork")
        )
    assert failed.value.code == grpc.StatusCode.NOT_FOUND
