"""Redaction before publishing: the publisher's `persist` hook, as the TypeScript client's.

A hook runs in the worker on each call's arguments and each result before they are published, so what the host does
not want kept never reaches the broker. It is called as `hook(payload, PersistContext(kind, tool_name))` with its own
copy of the payload, and returns the payload to publish (redacted as it likes; arguments must stay a JSON object, a
result must not be None), `"metadata"` (no payload: ids, name, times and the payload's size in bytes) or `None` (no
payload and no size). The limits (`max_event_bytes`, `max_result_chars`) then apply to what it returned.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from toolhistory._json import to_json, utf8_length
from toolhistory.errors import InvalidToolEventError, PersistHookError
from toolhistory.events import JsonValue

__all__ = [
    "PayloadKind",
    "PersistAnswer",
    "PersistContext",
    "PersistHook",
    "PersistOption",
]

PayloadKind = Literal["arguments", "result"]
"""Which payload a hook is given: a call's arguments, or a result."""


@dataclass(frozen=True)
class PersistContext:
    """What a hook is told of the payload it is given."""

    kind: PayloadKind
    tool_name: str
    """The tool the payload belongs to (a result's: the one given with it, else its call's)."""


PersistAnswer: TypeAlias = JsonValue | Literal["metadata"]
"""The payload to publish, "metadata" (its size only) or None (nothing of it)."""
PersistHook: TypeAlias = Callable[[JsonValue, PersistContext], PersistAnswer]
PersistOption: TypeAlias = PersistHook | Mapping[str, PersistHook]
"""One hook for every tool, or hooks by tool name (tools not named are published as they are)."""


def persist_option_problems(option: object) -> list[str]:
    """What is wrong with a `persist` option: it must be a callable, or a mapping of tool names to callables."""
    if option is None or callable(option):
        return []
    if not isinstance(option, Mapping):
        return [f"persist: must be a callable, or a mapping of tool names and callables (got {type(option).__name__})"]
    return [f"persist.{tool}: must be a callable" for tool, hook in option.items() if not callable(hook)]


def copy_persist_option(option: PersistOption | None) -> PersistOption | None:
    """A copy of the hooks by tool: adding a tool to the caller's mapping later changes nothing for the publisher."""
    return dict(option) if isinstance(option, Mapping) else option


def has_persist_hooks(option: PersistOption | None) -> bool:
    """Whether any payload may need a hook (a result whose tool is unknown cannot be published then)."""
    return option is not None and (callable(option) or len(option) > 0)


def persist_hook_for(option: PersistOption | None, tool_name: str) -> PersistHook | None:
    """The hook for a tool's payloads, if any."""
    if option is None:
        return None
    if isinstance(option, Mapping):
        return option.get(tool_name)
    return option


def persisted_fields(
    event_type: str, fields: dict[str, Any], tool_name: str | None, option: PersistOption | None
) -> dict[str, Any]:
    """An event's fields with its payload as the hook answered, and `producerRedacted` with the producer's choice
    (`redaction.persist`) whenever a hook ran on it, whatever it answered.

    A hook that raises fails the publication (PersistHookError), and so does an answer that is no payload of its
    kind (InvalidToolEventError): nothing is ever sent raw because a hook went wrong. A result whose tool is unknown
    is refused when the publisher has hooks.
    """
    kind: PayloadKind
    if event_type == "ToolCallRequested":
        kind = "arguments"
    elif event_type == "ToolResultReceived":
        kind = "result"
    else:
        return fields
    if not has_persist_hooks(option):
        return fields
    if not isinstance(tool_name, str):
        if kind == "arguments":
            return fields  # the contract's checks refuse a call without a tool name
        raise InvalidToolEventError(
            [
                "toolName is required with a result when the publisher has persist hooks "
                "(give tool_name, or publish the call with the same RunPublisher)"
            ]
        )
    hook = persist_hook_for(option, tool_name)
    if hook is None:
        return fields
    payload: JsonValue = fields[kind]
    try:
        answer = hook(copy.deepcopy(payload), PersistContext(kind, tool_name))
    except Exception as error:
        raise PersistHookError(tool_name, kind) from error
    out = dict(fields)
    if answer is None:
        out[kind] = {} if kind == "arguments" else None
        out.update(producerRedacted=True, redaction={"persist": "none"})
    elif isinstance(answer, str) and answer == "metadata":
        out[kind] = {} if kind == "arguments" else None
        out.update(
            originalBytes=utf8_length(to_json(payload)), producerRedacted=True, redaction={"persist": "metadata"}
        )
    else:
        if kind == "arguments" and not isinstance(answer, dict):
            raise InvalidToolEventError(
                [f"persist hook of {tool_name} (arguments): must return arguments as a JSON object, 'metadata' or None"]
            )
        out[kind] = answer
        out.update(producerRedacted=True, redaction={"persist": "full"})
    return out
