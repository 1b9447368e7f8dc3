"""Approvals: LangGraph's interrupt() inside a tool, and the value Command(resume=...) answers it with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.errors import GraphInterrupt

from toolhistory._recording import ApprovalDecision, PlacedCall, call_position_in_messages, fitted_reason
from toolhistory.limits import MAX_ID_LENGTH

__all__ = [
    "ApprovalDecision",
    "CallPosition",
    "approval_decision_of",
    "call_position_in",
    "interrupt_id_of",
    "interrupt_reason_of",
    "resume_value_for",
]


_APPROVING = frozenset({"approve", "approved", "accept", "accepted", "allow", "allowed", "confirm", "confirmed"})
_APPROVING_TOO = frozenset({"edit", "yes", "y"})
_DENYING = frozenset({"deny", "denied", "reject", "rejected", "decline", "declined", "refuse", "refused", "ignore"})
_DENYING_TOO = frozenset({"no", "n"})


def approval_decision_of(resume: object) -> ApprovalDecision | None:
    """What a resume value says about approval, when it says it in a way the adapter recognises; None otherwise.

    Recognised (anything else is the tool's own business, no decision is recorded):

    - ``True`` or ``False``;
    - a word: approve(d), accept(ed), allow(ed), confirm(ed), edit, yes, y (approved);
      deny/denied, reject(ed), decline(d), refuse(d), ignore, no, n (denied);
    - a mapping with ``approved`` (or ``approve``) a bool, or ``decision``, ``action`` or ``type``
      one of those words (LangGraph's Agent Inbox answers with ``type`` accept, edit, ignore or
      response; ``response`` says nothing about approval), with the text of ``reason``, ``message``
      or ``comment`` as the reason and ``decided_by`` (or ``decidedBy``) as who decided;
    - ``{"decisions": [one such mapping]}`` (LangChain's human-in-the-loop middleware).
    """
    if isinstance(resume, bool):
        return ApprovalDecision(approved=resume)
    if isinstance(resume, str):
        return _word_decision(resume)
    if not isinstance(resume, Mapping):
        return None
    decisions = resume.get("decisions")
    if isinstance(decisions, (list, tuple)):
        return approval_decision_of(decisions[0]) if len(decisions) == 1 else None
    flag = next((value for value in (resume.get("approved"), resume.get("approve")) if isinstance(value, bool)), None)
    word = _text_field(resume, ("decision", "action", "type"))
    decision = ApprovalDecision(approved=flag) if flag is not None else _word_decision(word) if word else None
    if decision is None:
        return None
    reason = _text_field(resume, ("reason", "message", "comment"))
    decided_by = _text_field(resume, ("decided_by", "decidedBy"))
    return ApprovalDecision(
        approved=decision.approved,
        reason=fitted_reason(reason) if reason else None,
        decided_by=decided_by if decided_by and len(decided_by) <= MAX_ID_LENGTH else None,
    )


def interrupt_reason_of(interrupt: GraphInterrupt) -> str | None:
    """Why the interrupt asks, as text for a person: its value when that is a string, else the value's
    ``reason``, ``message`` or ``description`` text. Any other value gives no reason: it is no text to show,
    and could carry what the retention policy would not keep.
    """
    for pending in _interrupts_of(interrupt):
        value = getattr(pending, "value", None)
        text = value if isinstance(value, str) else _text_field(value, ("reason", "message", "description"))
        if text is not None and text.strip():
            return fitted_reason(text)
    return None


def interrupt_id_of(interrupt: GraphInterrupt) -> str | None:
    """The id LangGraph gave the interrupt: a Command may resume several interrupts with a value per id."""
    return next(
        (
            pending.id
            for pending in _interrupts_of(interrupt)
            if isinstance(getattr(pending, "id", None), str) and pending.id
        ),
        None,
    )


def resume_value_for(resume: object, interrupt_id: str | None) -> object:
    """The value a Command resumes the interrupt ``interrupt_id`` with: its entry when the value maps interrupt ids."""
    if interrupt_id is not None and isinstance(resume, Mapping) and interrupt_id in resume:
        return resume[interrupt_id]
    return resume


CallPosition = PlacedCall
"""Where a call sits in its run by the messages: round, sequence, tool, and how many calls its round has."""


def call_position_in(messages: Sequence[BaseMessage], tool_call_id: str) -> PlacedCall | None:
    """Where the model's call ``tool_call_id`` sits, by the agent's messages (its graph state).

    Its index in its AIMessage's ``tool_calls``, and the count of AIMessages
    with tool calls since the last HumanMessage before it. Right when the
    call's run began at that HumanMessage; a run that itself resumed an
    interrupt leaves no mark in the messages, so for a call made after a
    resume, give the handler the replay's ``pending_approvals`` instead.
    """
    return call_position_in_messages(
        messages,
        tool_call_id,
        calls_of=lambda message: [(call.get("id"), call["name"]) for call in _tool_calls_in(message)],
        starts_run=lambda message: isinstance(message, HumanMessage),
    )


def _word_decision(word: str) -> ApprovalDecision | None:
    normalized = word.strip().lower()
    if normalized in _APPROVING or normalized in _APPROVING_TOO:
        return ApprovalDecision(approved=True)
    if normalized in _DENYING or normalized in _DENYING_TOO:
        return ApprovalDecision(approved=False)
    return None


def _text_field(value: object, names: Sequence[str]) -> str | None:
    if not isinstance(value, Mapping):
        return None
    return next((value[name] for name in names if isinstance(value.get(name), str)), None)


def _interrupts_of(interrupt: GraphInterrupt) -> Sequence[Any]:
    pending = interrupt.args[0] if interrupt.args else ()
    return pending if isinstance(pending, (list, tuple)) else ()


def _tool_calls_in(message: BaseMessage) -> list[Any]:
    return list(message.tool_calls) if isinstance(message, AIMessage) else []
