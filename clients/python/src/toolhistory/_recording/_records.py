"""What a recorded run is made of, whatever framework ran it: the one definition every adapter maps its framework's
calls, outputs and approvals onto (RunRecording publishes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from toolhistory.events import JsonObject, JsonValue, TokenUsage


@dataclass(frozen=True)
class AskedCall:
    """A call the model asked for, before the run gives it its place."""

    tool_call_id: str
    """The id the model gave the call; may be empty (the service then derives a stable one)."""
    tool_name: str
    arguments: JsonObject


@dataclass(frozen=True)
class RecordedCall:
    """A call as recorded: its place in the model response that asked for it.

    ``round_index`` counts the run's responses that asked for tools, from 0; ``sequence_index`` is the call's place
    among the recorded calls of its response. Its events (call, result, approval) are keyed by these and its id.
    """

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    arguments: JsonObject = field(default_factory=dict)
    """The call's arguments as a JSON object (an adapter keeps text that is not one as ``{"_raw": text}``)."""


@dataclass(frozen=True)
class RecordedResult:
    """What a call gave back, as the model was sent it."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    result: JsonValue
    is_error: bool


@dataclass(frozen=True)
class ApprovalDecision:
    """A person's answer to a call that waited for approval, as the host or the framework gives it."""

    approved: bool
    reason: str | None = None
    """The person's reason (a rejection's message), when they gave one."""
    decided_by: str | None = None
    """Who decided, as the host names them."""


@dataclass(frozen=True)
class RecordedDecision:
    """A person's answer, keyed by the call it answers (possibly a call of an earlier run)."""

    round_index: int
    sequence_index: int
    tool_call_id: str
    tool_name: str
    approved: bool
    reason: str | None = None
    """A rejection's message, when the host gave one (the text the framework sent the model instead)."""


@dataclass(frozen=True)
class ResponseReasoning:
    """What a reasoning model handed back with a round of calls, which the next request of the same turn must carry
    back unchanged: the provider's own items, as produced, and what it put on the calls."""

    provider: str
    """``openai``, ``anthropic``, ``google``, ``bedrock``, or another: replay gives the reasoning back only to it."""
    model: str
    items: Sequence[JsonObject] = ()
    """The items that precede the calls: OpenAI reasoning items, Anthropic thinking blocks, Gemini thought parts,
    Bedrock reasoningContent blocks."""
    call_signatures: Mapping[str, str] = field(default_factory=dict)
    """Tool call id to the opaque signature on that call (Gemini's thoughtSignature)."""
    call_item_ids: Mapping[str, str] = field(default_factory=dict)
    """Tool call id to the provider's own item id (OpenAI's fc_...)."""


@dataclass(frozen=True)
class RecordedResponse:
    """A round's model response as recorded: its reasoning, and the text the model said beside its calls."""

    reasoning: ResponseReasoning
    text: str | None = None


@dataclass(frozen=True)
class RecordedRound:
    """One model response that asked for tools: its calls, their results, and the calls that wait for approval."""

    round_index: int
    calls: tuple[RecordedCall, ...]
    results: tuple[RecordedResult, ...] = ()
    approval_requests: tuple[RecordedCall, ...] = ()
    response: RecordedResponse | None = None
    """The model's response that asked for the calls, when its provider handed back reasoning state (published
    before the calls)."""


@dataclass(frozen=True)
class RunRecord:
    """Everything one run has to record, in the order it is published.

    The answers to an earlier run's approval requests and those calls' results (keyed by the round and sequence of
    the run that asked), then each round.
    """

    decisions: tuple[RecordedDecision, ...] = ()
    """Answers to calls of an earlier run that waited for approval."""
    resumed_results: tuple[RecordedResult, ...] = ()
    """Results of calls of an earlier run (approved, or run elsewhere), with that run's keys."""
    rounds: tuple[RecordedRound, ...] = ()
    usage: tuple[TokenUsage, ...] = ()
    """The tokens of each model call of this run, in order."""
    awaiting: bool = False
    """The run stopped with calls waiting for a person's approval (or an external result)."""
    ended_after_tools: bool = False
    """The run's last model response asked for tools: the model never saw their results in this run."""
    final_message_id: str | None = None
    """The id the model gave the run's last assistant message, when it gave one."""
    last_response_id: str | None = None
    """The provider's id of the run's last model response, when it gave one."""

    @property
    def awaiting_approval(self) -> bool:
        """The run stopped for a person's approval (``awaiting``)."""
        return self.awaiting

    @property
    def finish_reason(self) -> str:
        """``stop`` when the model answered after the last round's results, else ``tool_limit``."""
        return "tool_limit" if self.awaiting or self.ended_after_tools else "stop"


@dataclass(frozen=True)
class ToolOutcome:
    """What a call's result is, before it is matched to its call."""

    result: JsonValue
    is_error: bool


def result_of(call: RecordedCall, outcome: ToolOutcome) -> RecordedResult:
    """A result of ``call``."""
    return RecordedResult(
        call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, outcome.result, outcome.is_error
    )


def decision_on(call: RecordedCall, approved: bool, reason: str | None = None) -> RecordedDecision:
    """The answer to ``call``."""
    return RecordedDecision(call.round_index, call.sequence_index, call.tool_call_id, call.tool_name, approved, reason)
