"""What a run records: the SDK's items and responses mapped onto the recording core's types (SDK objects in, plain
values out)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agents import ModelResponse, RunContextWrapper, RunState, ToolApprovalItem, ToolCallOutputItem
from agents.items import MessageOutputItem, RunItem

from toolhistory._recording import (
    AskedCall,
    RecordedCall,
    RecordedCalls,
    RecordedDecision,
    RecordedResult,
    RecordedRound,
    RunRecord,
    ToolOutcome,
    decision_on,
    result_of,
)
from toolhistory.events import JsonValue
from toolhistory.openai_agents._items import (
    OPENAI_PROVIDER,
    approval_tool_name,
    function_call_of,
    function_output_call_id,
    output_text,
    parse_tool_arguments,
    response_of,
    result_value,
    tool_result_of,
    usage_of,
)
from toolhistory.openai_agents._tool_errors import ToolErrorTest, is_sdk_tool_error

ApprovalRequest = RecordedCall
"""A call that stopped the run for a person's approval (the recording core's RecordedCall)."""

ApprovalDecision = RecordedDecision
"""A person's answer to a call the run resumed with (the recording core's RecordedDecision)."""

AgentsRunRecord = RunRecord
"""Everything one run of the SDK has to record, in the order to publish it (the recording core's RunRecord;
``awaiting_approval``: the run stopped for a person's approval)."""


@dataclass(frozen=True)
class _PendingApproval:
    tool_call_id: str
    tool_name: str


@dataclass(frozen=True)
class ResumePoint:
    """Where a resumed run starts in its ``RunState``.

    The responses and items there before belong to the run that stopped (it recorded them), and the
    calls waiting for approval then are the ones this run answers. Take it with ``resume_point_of``
    before ``Runner.run(agent, state)``: the SDK goes on in the same state.
    """

    responses: tuple[ModelResponse, ...]
    items: tuple[RunItem, ...]
    pending: tuple[_PendingApproval, ...]


@dataclass(frozen=True)
class ObservedOutput:
    """A tool output the run hooks saw (for a failed run whose state lacks it)."""

    call_id: str
    returned: object


def resume_point_of(state: RunState[Any, Any]) -> ResumePoint:
    """The resume point of ``state``, taken before a run resumes it.

    Reads the state's model responses and generated items (the SDK has no public accessor for
    them) and its ``get_interruptions()``.
    """
    responses = getattr(state, "_model_responses", None)
    items = getattr(state, "_generated_items", None)
    if not isinstance(responses, list) or not isinstance(items, list):
        raise TypeError(
            "resume_point_of: this RunState has no _model_responses/_generated_items lists; "
            "the installed openai-agents version is not one this adapter supports (0.24)"
        )
    pending: list[_PendingApproval] = []
    for approval in state.get_interruptions():
        call = function_call_of(approval.raw_item)
        if call is not None:
            pending.append(_PendingApproval(call[0], approval_tool_name(approval, call[1])))
    return ResumePoint(tuple(responses), tuple(items), tuple(pending))


def agents_run_record(
    new_items: Sequence[RunItem],
    raw_responses: Sequence[ModelResponse],
    *,
    interruptions: Sequence[ToolApprovalItem] = (),
    context_wrapper: RunContextWrapper[Any] | None = None,
    resume_point: ResumePoint | None = None,
    is_tool_error: ToolErrorTest | None = None,
    model_of: Callable[[ModelResponse], str | None] | None = None,
    provider_of: Callable[[ModelResponse], str | None] | None = None,
    observed_outputs: Sequence[ObservedOutput] = (),
) -> RunRecord:
    """What a run (``new_items`` and ``raw_responses`` of its result, or of an error's ``run_data``) records.

    Rounds are the model responses that asked for function tools, numbered over the whole state from
    0: a resumed run goes on with the numbering of the run it resumes, so a call's round and sequence
    are the same for every run that names it. A call's sequence is its place among the function calls
    of its response. Hosted tools (run by the provider) and computer, shell and apply_patch calls are
    not function calls and are not recorded. Only this run's part is returned when it resumed from
    ``resume_point``. A round's ``response`` is what its model response said beside the calls: its reasoning items
    and text (``response_of``), recorded with the model ``model_of`` names, through the provider ``provider_of``
    names (default ``openai``; ``None`` for a response records nothing beside its calls).
    """
    start = len(resume_point.responses) if resume_point is not None else 0
    earlier_items = {id(item) for item in resume_point.items} if resume_point is not None else set()
    calls, rounds = _numbered_rounds(raw_responses, start, model_of, provider_of)
    decisions = _decisions(calls, resume_point, context_wrapper)
    denied = {decision.tool_call_id for decision in decisions if not decision.approved}
    outputs = _outputs(new_items, earlier_items, observed_outputs)
    results, resumed = _placed_results(
        outputs, calls, rounds, denied, context_wrapper, is_tool_error or is_sdk_tool_error
    )
    requests = _approval_requests(interruptions, calls, resume_point)
    own_responses = list(raw_responses[start:])
    last = own_responses[-1] if own_responses else None
    return RunRecord(
        decisions=tuple(decisions),
        resumed_results=tuple(resumed),
        rounds=tuple(
            dataclasses.replace(
                r,
                results=tuple(results.get(r.round_index, ())),
                approval_requests=tuple(requests.get(r.round_index, ())),
            )
            for r in rounds
        ),
        usage=tuple(
            usage_of(response, model_of(response) if model_of is not None else None) for response in own_responses
        ),
        awaiting=len(interruptions) > 0,
        ended_after_tools=last is not None and any(function_call_of(item) is not None for item in last.output),
        final_message_id=_final_message_id(new_items, earlier_items),
        last_response_id=last.response_id if last is not None and last.response_id else None,
    )


def _numbered_rounds(
    raw_responses: Sequence[ModelResponse],
    start: int,
    model_of: Callable[[ModelResponse], str | None] | None,
    provider_of: Callable[[ModelResponse], str | None] | None,
) -> tuple[RecordedCalls, list[RecordedRound]]:
    """The calls of every response that asked for function tools, numbered over the whole state, and the rounds of
    this run's part (the responses from ``start``), each with what its response said beside the calls."""
    calls = RecordedCalls()
    rounds: list[RecordedRound] = []
    for at, response in enumerate(raw_responses):
        round_ = calls.open_round(_asked_calls(response))
        if round_ is not None and at >= start:
            said = response_of(
                response,
                model_of(response) if model_of is not None else None,
                provider_of(response) if provider_of is not None else OPENAI_PROVIDER,
            )
            rounds.append(dataclasses.replace(round_, response=said))
    return calls, rounds


def _final_message_id(new_items: Sequence[RunItem], earlier_items: set[int]) -> str | None:
    """The id of the last message the model gave in this run's part (not one of the items it resumed after)."""
    message_ids = [
        item.raw_item.id
        for item in new_items
        if id(item) not in earlier_items and isinstance(item, MessageOutputItem) and item.raw_item.id
    ]
    return message_ids[-1] if message_ids else None


def _asked_calls(response: ModelResponse) -> list[AskedCall]:
    calls = [call for call in map(function_call_of, response.output) if call is not None]
    return [AskedCall(call_id, name, parse_tool_arguments(arguments)) for call_id, name, arguments in calls]


def _decisions(
    calls: RecordedCalls, resume_point: ResumePoint | None, context_wrapper: RunContextWrapper[Any] | None
) -> list[RecordedDecision]:
    """The host's answers to the calls that waited when the run resumed, keyed by where the calls sat."""
    decisions: list[RecordedDecision] = []
    for pending in resume_point.pending if resume_point is not None else ():
        call = calls.latest(pending.tool_call_id)
        if call is None or context_wrapper is None:
            continue
        approved = context_wrapper.is_tool_approved(pending.tool_name, pending.tool_call_id)
        if approved is None:
            continue
        reason = None if approved else context_wrapper.get_rejection_message(pending.tool_name, pending.tool_call_id)
        decisions.append(decision_on(call, approved, reason))
    return decisions


def _outputs(
    new_items: Sequence[RunItem], earlier_items: set[int], observed_outputs: Sequence[ObservedOutput]
) -> list[tuple[str, str | None, JsonValue]]:
    """This run's outputs, ``(call_id, text the model was sent, result)``: from its items, then the ones its hooks saw
    that the items lack (a failed run's state)."""
    outputs: list[tuple[str, str | None, JsonValue]] = []
    seen: set[str] = set()
    for item in new_items:
        if id(item) in earlier_items or not isinstance(item, ToolCallOutputItem):
            continue
        call_id = function_output_call_id(item.raw_item)
        if call_id is None:
            continue
        seen.add(call_id)
        outputs.append((call_id, output_text(item.raw_item), tool_result_of(item)))
    for observed in observed_outputs:
        if observed.call_id in seen:
            continue
        seen.add(observed.call_id)
        text = observed.returned if isinstance(observed.returned, str) else str(observed.returned)
        outputs.append((observed.call_id, text, result_value(observed.returned, text)))
    return outputs


def _placed_results(
    outputs: Sequence[tuple[str, str | None, JsonValue]],
    calls: RecordedCalls,
    rounds: Sequence[RecordedRound],
    denied: set[str],
    context_wrapper: RunContextWrapper[Any] | None,
    is_tool_error: ToolErrorTest,
) -> tuple[dict[int, list[RecordedResult]], list[RecordedResult]]:
    """Each output as its call's result (an output answers the latest call of its id): by round when the call is one
    of this run's rounds, else among the resumed results."""
    own = {round_.round_index for round_ in rounds}
    by_round: dict[int, list[RecordedResult]] = {}
    resumed: list[RecordedResult] = []
    for call_id, text, value in outputs:
        call = calls.latest(call_id)
        # A denied call did not run: its decision says so, and the text the SDK sent instead is no result of the tool.
        if call is None or call_id in denied:
            continue
        # A call the SDK refused by a standing rejection (always_reject) did not run either.
        rejected = context_wrapper is not None and context_wrapper.is_tool_approved(call.tool_name, call_id) is False
        result = result_of(call, ToolOutcome(value, is_tool_error(call_id, text) or rejected))
        if call.round_index in own:
            by_round.setdefault(call.round_index, []).append(result)
        else:
            resumed.append(result)
    return by_round, resumed


def _approval_requests(
    interruptions: Sequence[ToolApprovalItem], calls: RecordedCalls, resume_point: ResumePoint | None
) -> dict[int, list[RecordedCall]]:
    """The calls that stopped this run for approval, by round (not the ones it resumed with, still waiting)."""
    already_pending = {pending.tool_call_id for pending in resume_point.pending} if resume_point is not None else set()
    requests: dict[int, list[RecordedCall]] = {}
    for approval in interruptions:
        asked = function_call_of(approval.raw_item)
        call = calls.latest(asked[0]) if asked is not None else None
        if call is not None and call.tool_call_id not in already_pending:
            requests.setdefault(call.round_index, []).append(call)
    return requests
