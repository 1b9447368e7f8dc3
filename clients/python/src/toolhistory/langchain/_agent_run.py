"""What one agent run records, as LangChain's callbacks reveal it, mapped onto the recording core."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.errors import GraphInterrupt
from langgraph.types import Command

from toolhistory._recording import (
    PendingApproval,
    PublishFailure,
    RunEnd,
    RunRecording,
    ToolOutcome,
    decision_on,
    result_of,
)
from toolhistory.langchain._approvals import (
    approval_decision_of,
    interrupt_id_of,
    interrupt_reason_of,
    resume_value_for,
)
from toolhistory.langchain._payloads import tool_messages_in
from toolhistory.langchain._tracker import CallTracker, TrackedCall

if TYPE_CHECKING:
    from uuid import UUID

    from toolhistory.events import PublishedEvent, RunScope
    from toolhistory.publisher import RunPublisher, ToolEventPublisher


@dataclass
class RunInfo:
    kind: Literal["chain", "model", "tool"]
    parent_run_id: UUID | None


@dataclass
class _Resume:
    """The invocation resumes the graph with this value (a Command's ``resume``)."""

    value: object


@dataclass
class _State:
    runs: dict[UUID, RunInfo] = field(default_factory=dict)
    called_models: dict[UUID, str] = field(default_factory=dict)
    tool_runs: dict[UUID, TrackedCall] = field(default_factory=dict)
    agent_run_id: UUID | None = None
    interrupted: bool = False
    ended: bool = False
    last_assistant_message_id: str | None = None
    last_output_text: str | None = None
    """The text of the model's last output (the answer, when it asked for no tools); None before the first."""
    resume: _Resume | None = None
    state_messages: Sequence[BaseMessage] = ()


class AgentRun:
    """What one agent run records, as LangChain's callbacks reveal it: the state the handler keeps between them, the
    calls it tracks, and the recording (opened with the run) it maps them onto."""

    def __init__(
        self,
        given_run: RunPublisher | None,
        opener: tuple[ToolEventPublisher, RunScope] | None,
        user_message_id: str | None,
        assistant_message_id: str | None,
        interrupt_ends_run: bool,
        pending_approvals: Sequence[PendingApproval] | None,
        recording_options: dict[str, Any],
    ) -> None:
        self._given_run = given_run
        self._opener = opener
        self._user_message_id = user_message_id
        self._assistant_message_id = assistant_message_id
        self._interrupt_ends_run = interrupt_ends_run
        self._recording_options = recording_options
        self._recording: RunRecording | None = None
        self.state = _State()
        self.calls = CallTracker(pending_approvals)

    @property
    def recording(self) -> RunRecording:
        """The run's recording, opened with the run: when the agent run starts, or when first asked for."""
        if self._recording is None:
            self._recording = self.open_run(None)
        return self._recording

    @property
    def opened(self) -> RunRecording | None:
        """The recording, if the run was opened."""
        return self._recording

    def start(self, run_id: UUID, inputs: object) -> None:
        """The agent run (the outermost chain run) started: the run opens with its input's user message id."""
        self.state.agent_run_id = run_id
        if self._recording is None:
            self._recording = self.open_run(inputs)
        resume = inputs.resume if isinstance(inputs, Command) else None
        self.state.resume = _Resume(resume) if resume is not None else None

    def open_run(self, inputs: object) -> RunRecording:
        """The run's recording: of the given RunPublisher, or of the run the publisher opens (with the user's message
        id of the agent's input)."""
        if self._given_run is not None:
            return RunRecording(self._given_run, **self._recording_options)
        if self._opener is None:
            raise RuntimeError("ToolHistoryCallbackHandler: no run to record to")  # __init__ checked it
        publisher, scope = self._opener
        run = publisher.run(
            tenant_id=scope.tenant_id,
            conversation_id=scope.conversation_id,
            channel=scope.channel,
            run_id=scope.run_id,
            user_message_id=self._user_message_id or last_human_message_id(inputs) or scope.user_message_id,
        )
        return RunRecording(run, **self._recording_options)

    def second_run(self, run_id: UUID) -> None:
        """The handler is one agent run's: a second one is reported, not mixed in."""
        state = self.state
        current = "already ended" if state.ended else f"LangChain run {state.agent_run_id}"
        self.recording.report_failure(
            PublishFailure(
                event=f"agent run {run_id}",
                error=RuntimeError(
                    f"ToolHistoryCallbackHandler records one agent run (run_id {self.recording.run.scope.run_id}, "
                    f"{current}): create a handler per agent run"
                ),
            )
        )

    def model_started(
        self, run_id: UUID, parent_run_id: UUID | None, metadata: Mapping[str, Any] | None, invocation: object
    ) -> None:
        params = invocation if isinstance(invocation, Mapping) else {}
        candidates = ((metadata or {}).get("ls_model_name"), params.get("model"), params.get("model_name"))
        model = next((m for m in candidates if isinstance(m, str) and m), None)
        self.state.runs[run_id] = RunInfo("model", parent_run_id)
        if model is not None:
            self.state.called_models[run_id] = model

    def in_loop(self, parent_run_id: UUID | None) -> bool:
        """Whether a run under ``parent_run_id`` belongs to the agent's loop: not after the run ended, and not
        inside a tool (a tool's own model and tool calls are no round of this run)."""
        state = self.state
        if state.ended:
            return False
        seen: set[UUID] = set()
        current = parent_run_id
        while current is not None and current not in seen:
            info = state.runs.get(current)
            if info is None:
                break
            if info.kind == "tool":
                return False
            seen.add(current)
            current = info.parent_run_id
        return True

    def request_approval(self, call: TrackedCall, interrupt: GraphInterrupt) -> Future[PublishedEvent | None] | None:
        """The tool interrupted: its call waits for a person (ToolApprovalRequested) until the graph resumes. A call
        the model gave no id is left waiting, unrecorded (the contract names an approval's call by its id)."""
        call.claimed = False
        call.awaiting_approval = True
        call.interrupt_id = interrupt_id_of(interrupt)
        return self.recording.publish_approval_request(call.call, interrupt_reason_of(interrupt), now())

    def decide(self, call: TrackedCall) -> Future[PublishedEvent | None] | None:
        """A call awaiting approval that the graph resumes: ToolApprovalDecided when the resume value says so."""
        resume = self.state.resume
        if not call.awaiting_approval or resume is None:
            return None
        call.awaiting_approval = False
        decision = approval_decision_of(resume_value_for(resume.value, call.interrupt_id))
        if decision is None:
            return None
        recorded = decision_on(call.call, decision.approved, decision.reason)
        return self.recording.publish_decision(recorded, decision.decided_by, now())

    def call_answered_by(self, output: object) -> TrackedCall | None:
        """A tool run that could not be matched at its start: the call its ToolMessage answers."""
        messages = tool_messages_in(output)
        tool_call_id = messages[0].tool_call_id if messages else None
        return self.calls.pending(tool_call_id, None, True) if tool_call_id else None

    def publish_result(self, call: TrackedCall, outcome: ToolOutcome) -> Future[Any]:
        call.answered = True
        return self.recording.publish_results([result_of(call.call, outcome)], now())

    def agent_run_ended(self) -> Future[PublishedEvent | None] | None:
        state = self.state
        if state.ended:
            return None
        if state.interrupted:
            return self.interrupted_run_ended()
        return self._complete_run(stopped_for_approval=False)

    def interrupted_run_ended(self) -> Future[PublishedEvent | None] | None:
        """The graph paused: the run stays open for this handler, or ends (``interrupt_ends_run``)."""
        if not self._interrupt_ends_run:
            self._pause()
            return None
        # Its last round's results did not all reach the model: it ends as after tools.
        return self._complete_run(stopped_for_approval=True)

    def _complete_run(self, *, stopped_for_approval: bool) -> Future[PublishedEvent | None]:
        state = self.state
        assistant_message_id = (
            self._assistant_message_id or state.last_assistant_message_id or f"run-{state.agent_run_id}"
        )
        self.end()
        end = RunEnd(
            assistant_message_id=assistant_message_id, stopped_for_approval=stopped_for_approval, occurred_at=now()
        )
        return self.recording.complete(end)

    def _pause(self) -> None:
        """The run stays open: a resumed invocation with this handler goes on with it."""
        state = self.state
        state.agent_run_id = None
        state.interrupted = False
        state.resume = None
        state.runs.clear()
        state.tool_runs.clear()
        self.calls.release_all()

    def end(self) -> None:
        state = self.state
        state.ended = True
        state.runs.clear()
        state.tool_runs.clear()
        state.called_models.clear()


def now() -> datetime:
    return datetime.now(timezone.utc)


def state_messages_of(inputs: object) -> Sequence[BaseMessage] | None:
    """The agent's messages a node of the loop got: ``{"messages": [...]}``, or a ToolNode task's ``state``."""
    if not isinstance(inputs, Mapping):
        return None
    messages = inputs.get("messages")
    if messages is None and isinstance(inputs.get("state"), Mapping):
        messages = inputs["state"].get("messages")
    if isinstance(messages, (list, tuple)) and all(isinstance(m, BaseMessage) for m in messages):
        return list(messages)
    return None


def last_human_message_id(inputs: object) -> str | None:
    """The id of the last HumanMessage of an agent's input (``{"messages": [...]}``, or a list of messages)."""
    messages = inputs if isinstance(inputs, (list, tuple)) else state_messages_of(inputs)
    for message in reversed(messages or ()):
        if isinstance(message, HumanMessage):
            return message.id if isinstance(message.id, str) and message.id else None
    return None
