"""One run's publishing methods: the contract's events of a run, handed to a send function."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolhistory._prepare import PendingEvent, Send
from toolhistory.consistency import later_consistency_token, remember_consistency_token
from toolhistory.events import (
    JsonObject,
    JsonValue,
    PublishedEvent,
    RunFailure,
    RunScope,
    TokenUsage,
    ToolCall,
    ToolResult,
)

if TYPE_CHECKING:
    from datetime import datetime


def _check_scope(scope: RunScope) -> None:
    """The run's ids must be non-empty strings (user_message_id when given): raises naming each one that is not."""
    problems: list[str] = []
    wrong_type = False
    for name in ("tenant_id", "conversation_id", "channel", "run_id"):
        value = getattr(scope, name)
        if value is None or value == "":
            problems.append(f"{name} is required")
        elif not isinstance(value, str):
            wrong_type = True
            problems.append(f"{name}: must be a non-empty string (got {type(value).__name__})")
    user_message_id = scope.user_message_id
    if user_message_id is not None and (not isinstance(user_message_id, str) or user_message_id == ""):
        wrong_type = wrong_type or not isinstance(user_message_id, str)
        problems.append(
            "user_message_id: must be a non-empty string when given "
            "(leave it out when the host has no id for the message)"
        )
    if problems:
        raise (TypeError if wrong_type else ValueError)("; ".join(problems))


def _usage_fields(usage: Sequence[TokenUsage] | None) -> dict[str, Any]:
    if usage is None:
        return {}
    entries: list[Any] = []
    for entry in usage:
        if isinstance(entry, TokenUsage):
            wire: dict[str, Any] = {"inputTokens": entry.input_tokens, "outputTokens": entry.output_tokens}
            if entry.model is not None:
                wire["model"] = entry.model
            entries.append(wire)
        else:
            entries.append(entry)  # the contract's checks name what is wrong with it
    return {"usage": entries}


def _cited_sources_fields(cited_sources: Sequence[int] | None) -> dict[str, Any]:
    return {} if cited_sources is None else {"citedSources": list(cited_sources)}


def _failure_fields(error: object) -> dict[str, Any]:
    """A run's failure as the contract's `error`: from a RunFailure, or a mapping with `code` and `message`."""
    if isinstance(error, Mapping):
        return {"code": error.get("code"), "message": error.get("message")}
    return {"code": getattr(error, "code", None), "message": getattr(error, "message", None)}


def _optional(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


class RunPublisher:
    """One run's events. Each method returns once the broker acknowledged its events.

    Each raises InvalidToolEventError (nothing was sent) or PublishError (delivery failed; `.retriable`). Blocking:
    async code calls it through `asyncio.to_thread`.

    Each PublishedEvent carries its `consistency_token`; after every publish the run remembers the last one for the
    conversation (`toolhistory.consistency`), so this process's reads of it include what was published
    (read-your-writes), and `consistency_token` is the run's last one, to carry to reads in another process.
    """

    def __init__(self, scope: RunScope, send: Send) -> None:
        """A run's publishing methods over `send`, which publishes prepared events (see prepare_events)."""
        _check_scope(scope)
        self.scope = scope
        self._send = send
        # The tool of each call published here, by step: a result's tool for the per-tool result limit.
        self._tool_names: dict[tuple[int, int, str], str] = {}
        self._consistency_token = ""
        self._token_lock = threading.Lock()

    def tool_call(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        tool_name: str,
        arguments: JsonObject,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """A call the model asked for (ToolCallRequested). `tool_call_id` may be empty."""
        call = ToolCall(round_index, sequence_index, tool_call_id, tool_name, arguments, event_id, occurred_at)
        return self._one(self._tool_call_event(call))

    def tool_calls(self, calls: Sequence[ToolCall]) -> list[PublishedEvent]:
        """A round's calls in one request, in order. Nothing is sent if one is invalid."""
        return self._published([self._tool_call_event(call) for call in calls])

    def tool_result(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        result: JsonValue,
        is_error: bool = False,
        tool_name: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """What a call gave back (ToolResultReceived). `tool_name` (not sent) picks the tool's `max_result_chars`
        and persist hook; default: the tool of the call this RunPublisher published for the step (required when
        the publisher has persist hooks and the call was published elsewhere)."""
        result_input = ToolResult(
            round_index, sequence_index, tool_call_id, result, is_error, tool_name, event_id, occurred_at
        )
        return self._one(self._tool_result_event(result_input))

    def tool_results(self, results: Sequence[ToolResult]) -> list[PublishedEvent]:
        """Several results in one request, in order. Nothing is sent if one is invalid."""
        return self._published([self._tool_result_event(result) for result in results])

    def approval_requested(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        reason: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The call waits for a person's approval (ToolApprovalRequested; publish the call first). `tool_call_id`
        must not be empty; `reason` is shown to the person."""
        return self._one(
            PendingEvent(
                type="ToolApprovalRequested",
                round_index=round_index,
                sequence_index=sequence_index,
                tool_call_id=tool_call_id,
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "toolCallId": tool_call_id,
                    "roundIndex": round_index,
                    "sequenceIndex": sequence_index,
                    **_optional(reason=reason),
                },
            )
        )

    def approval_decided(
        self,
        *,
        round_index: int,
        sequence_index: int,
        tool_call_id: str,
        approved: bool,
        reason: str | None = None,
        decided_by: str | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The person's answer to the call of that step (ToolApprovalDecided); this run may be a later one than
        the call's."""
        return self._one(
            PendingEvent(
                type="ToolApprovalDecided",
                round_index=round_index,
                sequence_index=sequence_index,
                tool_call_id=tool_call_id,
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "toolCallId": tool_call_id,
                    "roundIndex": round_index,
                    "sequenceIndex": sequence_index,
                    "approved": approved,
                    **_optional(reason=reason, decidedBy=decided_by),
                },
            )
        )

    def model_response(
        self,
        *,
        round_index: int,
        provider: str,
        model: str,
        text: str | None = None,
        reasoning: Sequence[JsonObject] | None = None,
        call_signatures: Mapping[str, str] | None = None,
        call_item_ids: Mapping[str, str] | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The model's response in a round (ModelResponseReceived): publish it before the round's calls (the service
        pairs them in either order). `provider` (``openai``, ``anthropic``, ``google``, ``bedrock``, or another name)
        and `model` say where its reasoning may go back; `text` is what the model said beside its calls; `reasoning`
        the provider's own items that precede the calls, each as produced; `call_signatures` and `call_item_ids` map a
        tool call id to the signature on that call (Gemini's thoughtSignature) and to the provider's item id (OpenAI's
        fc_...)."""
        return self._one(
            PendingEvent(
                type="ModelResponseReceived",
                round_index=round_index,
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "roundIndex": round_index,
                    "provider": provider,
                    "model": model,
                    **_optional(text=text),
                    **({} if reasoning is None else {"reasoning": list(reasoning)}),
                    **({} if call_signatures is None else {"callSignatures": dict(call_signatures)}),
                    **({} if call_item_ids is None else {"callItemIds": dict(call_item_ids)}),
                },
            )
        )

    def complete(
        self,
        *,
        assistant_message_id: str,
        finish_reason: str = "stop",
        usage: Sequence[TokenUsage] | None = None,
        cited_sources: Sequence[int] | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The run ended with the host's final assistant message (RunCompleted). `finish_reason`: `stop` when the
        model answered after the last round's results, e.g. `tool_limit` when the loop ended right after executing
        tools. `usage`: tokens per service (LLM) call of the run, in call order. `cited_sources`: the source numbers
        the final answer cites (`cited_sources_from(answer)` reads its `[sourceN]`), `[]` when none; replay then keeps
        only the cited items of results a `citations` policy rule names. None: every result is replayed whole."""
        return self._one(
            PendingEvent(
                type="RunCompleted",
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "assistantMessageId": assistant_message_id,
                    "finishReason": finish_reason,
                    **_usage_fields(usage),
                    **_cited_sources_fields(cited_sources),
                },
            )
        )

    def fail(
        self,
        *,
        error: RunFailure,
        usage: Sequence[TokenUsage] | None = None,
        event_id: str | None = None,
        occurred_at: datetime | str | None = None,
    ) -> PublishedEvent:
        """The run failed (RunFailed). `usage`: the tokens of the service calls made before it failed."""
        return self._one(
            PendingEvent(
                type="RunFailed",
                event_id=event_id,
                occurred_at=occurred_at,
                fields={
                    "error": _failure_fields(error),
                    **_usage_fields(usage),
                },
            )
        )

    @property
    def consistency_token(self) -> str:
        """Where this run's last published event landed (``""`` before any was published): a read given it
        answers only once everything this run published is recorded. This process's reads of the conversation
        send it by themselves (``last_consistency_token``); carry it to reads made in another process."""
        return self._consistency_token

    def _one(self, event: PendingEvent) -> PublishedEvent:
        [published] = self._published([event])
        return published

    def _published(self, events: Sequence[PendingEvent]) -> list[PublishedEvent]:
        """Sends, and remembers the last token for this process's reads of the conversation."""
        published = self._send(events)
        token = published[-1].consistency_token if published else ""
        if token:
            with self._token_lock:
                self._consistency_token = later_consistency_token(self._consistency_token or None, token)
            remember_consistency_token(self.scope.tenant_id, self.scope.conversation_id, token)
        return published

    @staticmethod
    def _step_key(round_index: object, sequence_index: object, tool_call_id: object) -> tuple[int, int, str] | None:
        if (
            type(round_index) is int  # not bool: True would be the same key as 1
            and type(sequence_index) is int
            and isinstance(tool_call_id, str)
        ):
            return (round_index, sequence_index, tool_call_id)
        return None

    def _tool_call_event(self, call: ToolCall) -> PendingEvent:
        key = self._step_key(call.round_index, call.sequence_index, call.tool_call_id)
        if key is not None and isinstance(call.tool_name, str):
            self._tool_names[key] = call.tool_name
        return PendingEvent(
            type="ToolCallRequested",
            round_index=call.round_index,
            sequence_index=call.sequence_index,
            tool_call_id=call.tool_call_id,
            event_id=call.event_id,
            occurred_at=call.occurred_at,
            tool_name=call.tool_name if isinstance(call.tool_name, str) else None,
            fields={
                "roundIndex": call.round_index,
                "sequenceIndex": call.sequence_index,
                "toolCallId": call.tool_call_id,
                "toolName": call.tool_name,
                "arguments": call.arguments,
            },
        )

    def _tool_result_event(self, result: ToolResult) -> PendingEvent:
        tool_name = result.tool_name
        if tool_name is None:
            key = self._step_key(result.round_index, result.sequence_index, result.tool_call_id)
            tool_name = None if key is None else self._tool_names.get(key)
        return PendingEvent(
            type="ToolResultReceived",
            round_index=result.round_index,
            sequence_index=result.sequence_index,
            tool_call_id=result.tool_call_id,
            event_id=result.event_id,
            occurred_at=result.occurred_at,
            tool_name=tool_name,
            fields={
                "toolCallId": result.tool_call_id,
                "roundIndex": result.round_index,
                "sequenceIndex": result.sequence_index,
                "result": result.result,
                "isError": result.is_error,
            },
        )


# librdkafka settings the publisher's guarantees rest on: set from its own options, not from kafka_config.
