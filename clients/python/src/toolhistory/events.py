"""The plain types of tool events: what a host hands the publisher, and what the broker acknowledged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict

if TYPE_CHECKING:
    from datetime import datetime

JsonValue: TypeAlias = str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None
"""A JSON value as Python's json module reads it."""
JsonObject: TypeAlias = dict[str, JsonValue]

EventType = Literal[
    "ToolCallRequested",
    "ToolResultReceived",
    "ToolApprovalRequested",
    "ToolApprovalDecided",
    "ModelResponseReceived",
    "RunCompleted",
    "RunFailed",
]
"""The contract's event types."""

INVOCATION_EVENT_TYPES: frozenset[str] = frozenset(
    {"ToolCallRequested", "ToolResultReceived", "ToolApprovalRequested", "ToolApprovalDecided"}
)
"""The events about one invocation: keyed by the call's round, sequence and toolCallId."""
ROUND_EVENT_TYPES: frozenset[str] = frozenset({"ModelResponseReceived"})
"""The events about one round of a run (the model's response in it): keyed by the round."""
RUN_EVENT_TYPES: frozenset[str] = frozenset({"RunCompleted", "RunFailed"})
"""The events that end a run: one of each type per run."""


@dataclass(frozen=True)
class TokenUsage:
    """The tokens of one service (LLM) call of a run; sent as `{"inputTokens", "outputTokens", "model"?}`."""

    input_tokens: int
    output_tokens: int
    model: str | None = None
    """The model the call went to, when the host knows it."""


@dataclass(frozen=True)
class RunFailure:
    """Why a run failed: a short code and a message."""

    code: str
    message: str


@dataclass(frozen=True)
class RunScope:
    """Which run the events belong to: the envelope every event of it shares."""

    tenant_id: str
    conversation_id: str
    channel: str
    run_id: str
    user_message_id: str | None = None
    """The host's id of the message that started the run: replay places a run without a final answer (failed, or
    still running) right after it."""


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for, as `RunPublisher.tool_calls` takes it."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    """The id the model gave the call; may be empty (the service then derives a stable one)."""
    tool_name: str
    arguments: JsonObject
    event_id: str | None = None
    """The idempotency key; default: derived from the run and the step, so a re-published step is recorded once."""
    occurred_at: datetime | str | None = None
    """Default: now. A datetime must carry its time zone."""


@dataclass(frozen=True)
class ToolResult:
    """What a call gave back, as `RunPublisher.tool_results` takes it."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    result: JsonValue
    is_error: bool = False
    tool_name: str | None = None
    """The tool that gave the result, for the publisher's per-tool `max_result_chars` (not sent: the call names the
    tool). Default: the tool of the call the same RunPublisher published for the step."""
    event_id: str | None = None
    occurred_at: datetime | str | None = None


@dataclass(frozen=True)
class PublishedEvent:
    """An event the broker acknowledged, and where it put it."""

    event_id: str
    type: EventType
    partition: int
    offset: int
    consistency_token: str = ""
    """Where the event landed, as an opaque, printable string: a read given it (``consistency_token=`` of
    ``get_replay_history`` and the other reads) answers only once the event is recorded. This process's own reads
    of the conversation send the last one by themselves; carry it to reads made elsewhere (e.g. in the host's
    message row). Empty when the send step named no place (a ``Send`` of the host's own that sets none)."""


class MaxResultCharsByTool(TypedDict, total=False):
    """Result limits per tool, as the service's policy file states them: a tool's own limit, else `defaults`."""

    defaults: int
    tools: dict[str, int]


MaxResultChars: TypeAlias = int | MaxResultCharsByTool
"""The most characters (UTF-16 code units, as JavaScript counts them) a result may have as text: one limit for every
tool, or per tool over a default."""
