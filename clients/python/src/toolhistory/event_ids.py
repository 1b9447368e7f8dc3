"""Stable event ids: the same run and the same step give the same id, so a retried step is recorded once.

The same ids as the TypeScript client's for the same inputs (the shared test vectors in
libs/contract/test-vectors/event-ids.json pin them).
"""

from __future__ import annotations

import hashlib
import re
import uuid

from toolhistory._json import as_javascript_string, to_json
from toolhistory.events import INVOCATION_EVENT_TYPES, ROUND_EVENT_TYPES, RUN_EVENT_TYPES, EventType

TOOL_EVENT_ID_NAMESPACE = "5b0f3c1e-9a6d-4c3b-8f2e-7d41a9e6c2b0"
"""The namespace of toolhistory's name-based event ids (a fixed random UUID). It never changes: a new one would give
every retried step a new id."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def name_based_uuid(name: str, namespace: str = TOOL_EVENT_ID_NAMESPACE) -> str:
    """A name-based UUID (version 5, RFC 9562 section 5.5): SHA-1 of the namespace's 16 bytes and the name's UTF-8.

    A lone surrogate in `name` is hashed as U+FFFD, as Node.js encodes it.
    """
    hex_digits = namespace.replace("-", "")
    if not re.fullmatch(r"[0-9a-fA-F]{32}", hex_digits):
        raise ValueError(f"namespace: {namespace!r} is not a UUID")
    text = _LONE_SURROGATE.sub("\ufffd", as_javascript_string(name))
    digest = hashlib.sha1(bytes.fromhex(hex_digits) + text.encode("utf-8"), usedforsecurity=False).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))


def derive_event_id(
    *,
    tenant_id: str,
    conversation_id: str,
    run_id: str,
    type: EventType,
    round_index: int | None = None,
    sequence_index: int | None = None,
    tool_call_id: str | None = None,
) -> str:
    """The event id a step gets when the host names none.

    The events about one invocation (ToolCallRequested, ToolResultReceived, ToolApprovalRequested,
    ToolApprovalDecided) are keyed by the call's round_index, sequence_index and tool_call_id, which they require;
    the model's response in a round (ModelResponseReceived) by its round_index alone; a run's end (RunCompleted,
    RunFailed) by its type alone, and takes none of them.
    """
    if type in INVOCATION_EVENT_TYPES:
        missing = [
            name
            for name, value in (
                ("round_index", round_index),
                ("sequence_index", sequence_index),
                ("tool_call_id", tool_call_id),
            )
            if value is None
        ]
        if missing:
            raise ValueError(f"{type} is keyed by its call's step: {', '.join(missing)} is required")
        step: list[object] = [type, round_index, sequence_index, tool_call_id]
    elif type in ROUND_EVENT_TYPES:
        if round_index is None:
            raise ValueError(f"{type} is keyed by its round: round_index is required")
        if sequence_index is not None or tool_call_id is not None:
            raise ValueError(f"{type} is keyed by its round alone: leave sequence_index and tool_call_id out")
        step = [type, round_index]
    elif type in RUN_EVENT_TYPES:
        if round_index is not None or sequence_index is not None or tool_call_id is not None:
            raise ValueError(f"{type} is keyed by its type alone: leave round_index, sequence_index, tool_call_id out")
        step = [type]
    else:
        raise ValueError(f"type: {type!r} is not a tool event type")
    return name_based_uuid(to_json(["toolhistory/v1", tenant_id, conversation_id, run_id, *step]))
