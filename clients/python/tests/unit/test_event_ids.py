"""Derived event ids: the same as the TypeScript client's for the same run and step, stable, and apart otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from toolhistory.event_ids import TOOL_EVENT_ID_NAMESPACE, derive_event_id, name_based_uuid

VECTORS = Path(__file__).parent.joinpath("../../../../libs/contract/test-vectors").resolve()
UUID_V5 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")

INVOCATION_TYPES = ["ToolCallRequested", "ToolResultReceived", "ToolApprovalRequested", "ToolApprovalDecided"]
RUN_TYPES = ["RunCompleted", "RunFailed"]


def event_id_vectors() -> list[dict[str, Any]]:
    vectors: list[dict[str, Any]] = json.loads(VECTORS.joinpath("event-ids.json").read_text("utf-8"))
    return vectors


def derive(run: dict[str, Any], identity: dict[str, Any]) -> str:
    return derive_event_id(
        tenant_id=run["tenantId"],
        conversation_id=run["conversationId"],
        run_id=run["runId"],
        type=identity["type"],
        round_index=identity.get("roundIndex"),
        sequence_index=identity.get("sequenceIndex"),
        tool_call_id=identity.get("toolCallId"),
    )


@pytest.mark.parametrize(
    "vector", event_id_vectors(), ids=lambda vector: json.dumps([vector["run"], vector["identity"]])
)
def test_the_shared_vectors_give_the_typescript_clients_ids(vector: dict[str, Any]) -> None:
    assert derive(vector["run"], vector["identity"]) == vector["eventId"]


def test_the_vectors_cover_what_json_text_makes_tricky() -> None:
    texts = [
        text
        for vector in event_id_vectors()
        for text in [*vector["run"].values(), vector["identity"].get("toolCallId")]
    ]
    assert "" in texts
    assert any(text and re.search("[^\x00-\x7f]", text) for text in texts)
    assert any(text and '"' in text and "\\" in text for text in texts)
    assert any(text and "😀" in text for text in texts)
    assert any(text and re.search("[\ud800-\udfff]", text) for text in texts)


def test_name_based_uuids_are_rfc_9562_version_5() -> None:
    # RFC 9562's example: the DNS namespace and www.example.com.
    assert name_based_uuid("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8") == (
        "2ed6657d-e927-568b-95e1-2665a8aea6a2"
    )


def test_a_namespace_that_is_not_a_uuid_is_refused() -> None:
    with pytest.raises(ValueError, match="namespace"):
        name_based_uuid("x", "not-a-uuid")


def test_the_namespace_never_changes() -> None:
    assert TOOL_EVENT_ID_NAMESPACE == "5b0f3c1e-9a6d-4c3b-8f2e-7d41a9e6c2b0"


@pytest.mark.parametrize("event_type", INVOCATION_TYPES)
def test_an_invocation_event_needs_its_step(event_type: Any) -> None:
    with pytest.raises(ValueError, match="sequence_index, tool_call_id is required"):
        derive_event_id(tenant_id="t", conversation_id="c", run_id="r", type=event_type, round_index=0)


@pytest.mark.parametrize("event_type", RUN_TYPES)
def test_a_run_event_takes_no_step(event_type: Any) -> None:
    with pytest.raises(ValueError, match="keyed by its type alone"):
        derive_event_id(tenant_id="t", conversation_id="c", run_id="r", type=event_type, round_index=0)


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="ToolCallCancelled"):
        derive_event_id(tenant_id="t", conversation_id="c", run_id="r", type="ToolCallCancelled")  # type: ignore[arg-type]


def test_parts_are_kept_apart_whatever_they_hold() -> None:
    assert derive_event_id(tenant_id="a", conversation_id="b|c", run_id="d", type="RunCompleted") != derive_event_id(
        tenant_id="a", conversation_id="b", run_id="c|d", type="RunCompleted"
    )


runs = st.fixed_dictionaries({"tenantId": st.text(), "conversationId": st.text(), "runId": st.text()})
identities = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(INVOCATION_TYPES),
            "roundIndex": st.integers(min_value=0, max_value=2**31 - 1),
            "sequenceIndex": st.integers(min_value=0, max_value=2**31 - 1),
            "toolCallId": st.text(),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(RUN_TYPES)}),
)


@given(runs, identities)
def test_the_same_step_of_the_same_run_has_the_same_version_5_id(run: dict[str, Any], identity: dict[str, Any]) -> None:
    event_id = derive(run, identity)
    assert UUID_V5.match(event_id)
    assert derive(dict(run), dict(identity)) == event_id


@given(runs, identities, runs, identities)
def test_ids_differ_when_the_run_or_the_step_differs(
    run: dict[str, Any], identity: dict[str, Any], other_run: dict[str, Any], other_identity: dict[str, Any]
) -> None:
    assume((run, identity) != (other_run, other_identity))
    assert derive(run, identity) != derive(other_run, other_identity)


@given(runs, st.integers(min_value=0, max_value=1000), st.integers(min_value=0, max_value=1000), st.text())
def test_every_event_of_one_step_has_its_own_id(
    run: dict[str, Any], round_index: int, sequence: int, call: str
) -> None:
    step = {"roundIndex": round_index, "sequenceIndex": sequence, "toolCallId": call}
    ids = {derive(run, {"type": event_type, **step}) for event_type in INVOCATION_TYPES}
    ids |= {derive(run, {"type": event_type}) for event_type in RUN_TYPES}
    assert len(ids) == len(INVOCATION_TYPES) + len(RUN_TYPES)
