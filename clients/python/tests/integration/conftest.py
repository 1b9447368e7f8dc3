"""Fixtures of the integration tests: the running service and broker they talk to.

The jest test test/client/python-package.e2e-spec.ts starts the built
service (TLS, JWT tenants, a fresh topic and schema) and runs these tests
with its address in the environment. Run alone, they need the same
variables; without them every test fails saying which one is missing
(never skipped: a skipped integration test would hide what it should show).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from toolhistory.aio import AsyncToolHistoryClient
from toolhistory.client import TlsConfig, ToolHistoryClient
from toolhistory.errors import ToolHistoryError
from toolhistory.formats import HistoryFormat
from toolhistory.publisher import ToolEventPublisher
from toolhistory.replay import ReplayHistory

REQUIRED = ("TOOLHISTORY_ADDRESS", "TOOLHISTORY_TENANT", "KAFKA_BROKERS", "TOOL_EVENTS_TOPIC")


@dataclass(frozen=True)
class Stack:
    """Where the service and the broker are, and who the tests are to them."""

    address: str
    brokers: list[str]
    topic: str
    tenant: str
    """The tenant `token` may read and write: every test's tenant_id."""
    token: str | None
    other_tenant_token: str | None
    """A token of another tenant: what the service must refuse this tenant's data to."""
    history_reader_token: str | None
    """A token of the tenant with history:read only (an agent's): it may search one conversation, not the tenant."""
    tls: TlsConfig | None


@pytest.fixture(scope="session")
def stack() -> Stack:
    missing = [name for name in REQUIRED if not os.environ.get(name)]
    if missing:
        pytest.fail(
            f"integration tests need {', '.join(missing)} (run them through test/client/python-package.e2e-spec.ts)",
            pytrace=False,
        )
    ca_file = os.environ.get("TOOLHISTORY_CA_FILE")
    return Stack(
        address=os.environ["TOOLHISTORY_ADDRESS"],
        brokers=os.environ["KAFKA_BROKERS"].split(","),
        topic=os.environ["TOOL_EVENTS_TOPIC"],
        tenant=os.environ["TOOLHISTORY_TENANT"],
        token=os.environ.get("TOOLHISTORY_TOKEN") or None,
        other_tenant_token=os.environ.get("TOOLHISTORY_OTHER_TENANT_TOKEN") or None,
        history_reader_token=os.environ.get("TOOLHISTORY_HISTORY_READER_TOKEN") or None,
        tls=TlsConfig(root_certificates=Path(ca_file).read_bytes()) if ca_file else None,
    )


@pytest.fixture(scope="session")
def publisher(stack: Stack) -> Iterator[ToolEventPublisher]:
    with ToolEventPublisher(brokers=stack.brokers, topic=stack.topic) as events:
        yield events


@pytest.fixture(scope="session")
def client(stack: Stack) -> Iterator[ToolHistoryClient]:
    with ToolHistoryClient(stack.address, token=stack.token, tls=stack.tls or False) as history:
        yield history


@pytest.fixture
async def aclient(stack: Stack) -> AsyncIterator[AsyncToolHistoryClient]:
    async with AsyncToolHistoryClient(stack.address, token=stack.token, tls=stack.tls or False) as history:
        yield history


@pytest.fixture
def ids() -> Callable[[str], str]:
    """Unique ids per test: `ids("conv")` -> `conv-<random>`."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:12]}"


T = TypeVar("T")

POLL_INTERVAL = 0.1
POLL_TIMEOUT = 30.0


def wait_for(what: str, attempt: Callable[[], T], until: Callable[[T], bool]) -> T:
    """Calls `attempt` every 100 ms until `until` holds of its answer; fails after 30 s with the last answer."""
    deadline = time.monotonic() + POLL_TIMEOUT
    while True:
        answer = attempt()
        if until(answer):
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {POLL_TIMEOUT:.0f} s waiting for {what}; last answer: {answer!r}")
        time.sleep(POLL_INTERVAL)


Replayed = Callable[..., ReplayHistory]


@pytest.fixture
def replayed(stack: Stack) -> Replayed:
    """`replayed(client, conversation_id, format, until=...)`: the replay once `until` holds (recording is async)."""

    def replay(
        history_client: ToolHistoryClient,
        conversation_id: str,
        format: HistoryFormat = "openai",
        *,
        until: Callable[[ReplayHistory], bool],
        tenant_id: str | None = None,
    ) -> ReplayHistory:
        def attempt() -> ReplayHistory:
            return history_client.get_replay_history(
                tenant_id=tenant_id or stack.tenant, conversation_id=conversation_id, format=format
            )

        return wait_for(f"the replay of {conversation_id} ({format})", attempt, until)

    return replay


@pytest.fixture
def replayed_now(stack: Stack) -> Replayed:
    """`replayed_now(client, conversation_id, format, until=...)`: the replay read once, right away, which `until`
    must hold of: the client sends the consistency token this process last published for the conversation, so
    what was published before is in it (read-your-writes). No polling."""

    def replay(
        history_client: ToolHistoryClient,
        conversation_id: str,
        format: HistoryFormat = "openai",
        *,
        until: Callable[[ReplayHistory], bool],
        tenant_id: str | None = None,
    ) -> ReplayHistory:
        history = history_client.get_replay_history(
            tenant_id=tenant_id or stack.tenant, conversation_id=conversation_id, format=format
        )
        if not until(history):
            pytest.fail(
                f"the replay of {conversation_id} ({format}) read right away lacks what was published: {history!r}"
            )
        return history

    return replay


__all__ = ["Replayed", "Stack", "ToolHistoryError", "wait_for"]
