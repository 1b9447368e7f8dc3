"""``ToolHistorySessionService``: ADK's session service with the tool calls kept by toolhistory."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.adk.events import Event
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse

from toolhistory._recording import FailedRunEnd, RecordedResult, RunEnd, RunRecording, decision_on, waiting_run
from toolhistory.adk._events import (
    RECORDED_MARK,
    REPLAY_FORMAT,
    ReplayedEvents,
    asked_calls,
    confirmation_answers,
    confirmation_requests,
    events_of_turn,
    is_answer,
    is_tool_event,
    pending_call_event,
    reasoning_of,
    recorded_result,
    responses_of,
    text_of,
    usage_of,
)
from toolhistory.events import RunFailure
from toolhistory.splice import host_branch, splice_history

if TYPE_CHECKING:
    from concurrent.futures import Future

    from toolhistory.aio import AsyncToolHistoryClient
    from toolhistory.publisher import ToolEventPublisher
    from toolhistory.replay import ReplayHistory

_log = logging.getLogger("toolhistory.adk")

_DEFAULT_AUTHOR = "model"


@dataclass
class _Run:
    invocation_id: str
    recording: RunRecording
    confirmations: dict[str, str] = field(default_factory=dict)
    """ADK's confirmation request (its ``adk_request_confirmation`` call id) to the call it asks about."""


class ToolHistorySessionService(BaseSessionService):
    """An ADK session service that keeps the events of tool use in toolhistory and every other event in ``inner``.

    An event with function calls (the model's response, with its thought signatures and thoughts) or function
    responses is recorded through the recording core (one run per invocation: its ``invocation_id`` is the run id,
    the user's message event its ``user_message_id``, the final answer event its ``assistant_message_id``), each
    round as it happens; every other event goes to ``inner`` as it is. ``get_session`` returns ``inner``'s events
    with the replayed calls in their places (``GetSessionConfig`` applies to that list), so the next invocation's
    model sees them as it saw them, subject to toolhistory's replay rules (freshness, orphans, approvals, the
    token budget, the host's branch). The session's id is the conversation id.

    A recorded event that also changed state or artifacts is kept in ``inner`` too, without its content, so the
    change persists. A run that never answered is ended as failed when the session's next invocation starts: with
    the channel's ``per_service_call`` visibility its finished rounds still replay, with ``per_run`` they do not.
    """

    def __init__(
        self,
        inner: BaseSessionService,
        *,
        publisher: ToolEventPublisher,
        client: AsyncToolHistoryClient,
        tenant_id: str,
        channel: str,
        replay_options: dict[str, Any] | None = None,
        erase_on_delete: bool = False,
    ) -> None:
        """
        Args:
            inner: the session service that keeps the session and its other events (e.g. ``InMemorySessionService``,
                ``DatabaseSessionService``).
            publisher: publishes the calls; its runs are this service's invocations.
            client: reads the replay (asynchronous: ADK is).
            tenant_id: the tenant of every session.
            channel: the channel the runs are recorded in and replayed for (its policy applies).
            replay_options: further ``get_replay_history`` arguments (``freshness_window_seconds``,
                ``max_history_tokens``, ...).
            erase_on_delete: ``delete_session`` also erases the recorded calls (default: audit keeps them).
        """
        self.inner = inner
        self.publisher = publisher
        self.client = client
        self.tenant_id = tenant_id
        self.channel = channel
        self.replay_options = dict(replay_options or {})
        self.erase_on_delete = erase_on_delete
        self._runs: dict[str, _Run] = {}

    # -- the session's life: inner's ----------------------------------------------------------------------------

    async def create_session(
        self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None, session_id: str | None = None
    ) -> Session:
        return await self.inner.create_session(app_name=app_name, user_id=user_id, state=state, session_id=session_id)

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> ListSessionsResponse:
        return await self.inner.list_sessions(app_name=app_name, user_id=user_id)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await self.inner.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        self._runs.pop(session_id, None)
        if self.erase_on_delete:
            await self.client.erase_conversation(tenant_id=self.tenant_id, conversation_id=session_id)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        return await self.inner.get_user_state(app_name=app_name, user_id=user_id)

    async def flush(self) -> None:
        await self.inner.flush()

    # -- reading: inner's events with the replay in its places ---------------------------------------------------

    async def get_session(
        self, *, app_name: str, user_id: str, session_id: str, config: GetSessionConfig | None = None
    ) -> Session | None:
        session = await self.inner.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
        if session is None:
            return None
        host = [e for e in session.events if not (e.custom_metadata or {}).get(RECORDED_MARK)]
        history = await self.client.get_replay_history(
            tenant_id=self.tenant_id,
            conversation_id=session_id,
            format=REPLAY_FORMAT,
            channel=self.channel,
            view="messages",
            branch_message_ids=host_branch(host, _event_id),
            **self.replay_options,
        )
        events: list[Event] = splice_history(host, _replayed_turns(host, history), id_of=_event_id)
        events = _with_pending_calls(events, history)
        return session.model_copy(update={"events": _configured(events, config)})

    # -- writing: tool events to toolhistory, the rest to inner -------------------------------------------------

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        if not is_tool_event(event):
            appended = await self.inner.append_event(session, event)
            await self._after_host_event(session, appended)
            return appended
        await self._record(session, event)
        if _changes_state(event):
            kept = event.model_copy(update={"content": None, "custom_metadata": _marked(event.custom_metadata)})
            await self.inner.append_event(session, kept)
            # inner put the content-less copy in the live session; this invocation's model needs the calls themselves.
            for index in range(len(session.events) - 1, -1, -1):
                if session.events[index] is kept:
                    session.events[index] = event
                    break
            return event
        return await super().append_event(session, event)

    async def _after_host_event(self, session: Session, event: Event) -> None:
        requests = confirmation_requests(event)
        if requests:
            run = self._run_of(session.id, event.invocation_id, user_message_id=None)
            run.confirmations.update(requests)
            return
        if event.author == "user":
            answers = confirmation_answers(event)
            if answers:
                await self._decide(session, event.invocation_id, answers)
            elif not responses_of(event) and event.content is not None and event.content.parts:
                # A user's message starts a run; a user event without content (a rewind, a state change) does not.
                await self._start(session.id, event.invocation_id, event.id)
            return
        if not is_answer(event):
            return
        run = self._run_of(session.id, event.invocation_id, user_message_id=None)
        run.recording.response(usage=usage_of(event), text=text_of(event), message_id=event.id)
        await _settle(run.recording.complete(RunEnd(assistant_message_id=event.id)))
        self._runs.pop(session.id, None)

    async def _record(self, session: Session, event: Event) -> None:
        run = self._run_of(session.id, event.invocation_id, user_message_id=None)
        recording = run.recording
        calls = asked_calls(event)
        if calls:
            round_ = recording.response(
                calls=calls, usage=usage_of(event), text=text_of(event), reasoning=reasoning_of(event)
            )
            if round_ is not None:
                await _settle(recording.publish_calls(round_.calls))
        results: list[RecordedResult] = []
        asked_to_confirm = event.actions.requested_tool_confirmations or {}
        for response in responses_of(event):
            call = recording.calls.open(response.id or "", response.name)
            confirmation = asked_to_confirm.get(response.id or "")
            if call is not None and confirmation is not None:
                # ADK's "requires confirmation" stand-in is no result: the call waits for a person.
                request = recording.publish_approval_request(call, reason=confirmation.hint or None)
                if request is not None:
                    await _settle(request)
                continue
            if call is None:
                _log.warning(
                    "function response %r (%s) answers no call of run %s", response.id, response.name, run.invocation_id
                )
                continue
            recording.calls.answer(call)
            results.append(recorded_result(call, response))
        if results:
            await _settle(recording.publish_results(results))

    async def _decide(self, session: Session, invocation_id: str, answers: dict[str, bool]) -> None:
        """The person's answers to ADK's confirmation requests, as decisions on the calls they asked about."""
        run = self._open_run(session.id, invocation_id)
        if run is None or not set(answers) <= set(run.confirmations):
            # ADK resumes a confirmed call in the invocation that asked, which another process may have started.
            run = await self._resumed_run(session, invocation_id) or self._run_of(
                session.id, invocation_id, user_message_id=None
            )
        for confirmation_id, approved in answers.items():
            call_id = run.confirmations.get(confirmation_id)
            call = run.recording.calls.latest(call_id) if call_id else None
            if call is None:
                _log.warning("confirmation %r answers no call of run %s asked about", confirmation_id, invocation_id)
                continue
            decided = run.recording.publish_decision(decision_on(call, approved))
            if decided is not None:
                await _settle(decided)

    async def _start(self, session_id: str, invocation_id: str, user_message_id: str) -> None:
        previous = self._runs.get(session_id)
        if previous is not None and previous.invocation_id != invocation_id:
            await self._end_unanswered(session_id, previous)
        self._run_of(session_id, invocation_id, user_message_id=user_message_id)

    def _open_run(self, session_id: str, invocation_id: str) -> _Run | None:
        run = self._runs.get(session_id)
        return run if run is not None and run.invocation_id == invocation_id else None

    def _run_of(
        self, session_id: str, invocation_id: str, *, user_message_id: str | None, first_round_index: int = 0
    ) -> _Run:
        run = self._open_run(session_id, invocation_id)
        if run is not None:
            return run
        publisher = self.publisher.run(
            tenant_id=self.tenant_id,
            conversation_id=session_id,
            channel=self.channel,
            run_id=invocation_id,
            user_message_id=user_message_id,
        )
        run = _Run(invocation_id, RunRecording(publisher, first_round_index=first_round_index))
        self._runs[session_id] = run
        return run

    async def _resumed_run(self, session: Session, invocation_id: str) -> _Run | None:
        """The invocation another service object paused for confirmation, going on here: its waiting calls as the
        replay lists them, ADK's requests to confirm them from the session's events; ``None`` when none waits."""
        history = await self.client.get_replay_history(
            tenant_id=self.tenant_id, conversation_id=session.id, format=REPLAY_FORMAT, channel=self.channel
        )
        waiting = waiting_run(invocation_id, history.pending_approvals, history.turns)
        if waiting is None:
            return None
        own = [e for e in session.events if e.invocation_id == invocation_id]
        question = next((e.id for e in own if e.author == "user" and e.content and not responses_of(e)), None)
        previous = self._runs.get(session.id)
        if previous is not None and previous.invocation_id != invocation_id:
            await self._end_unanswered(session.id, previous)
        run = self._run_of(
            session.id, invocation_id, user_message_id=question, first_round_index=waiting.next_round_index
        )
        for call in waiting.calls:
            if run.recording.calls.latest(call.tool_call_id) is None:
                run.recording.calls.add_earlier(call)
        for event in own:
            run.confirmations.update(confirmation_requests(event))
        return run

    async def _end_unanswered(self, session_id: str, run: _Run) -> None:
        """A run that never answered (the process stopped it, or it raised) ends as failed."""
        failure = RunFailure("interrupted", "the session's next invocation started before this one answered")
        try:
            await _settle(run.recording.fail(FailedRunEnd(failure)))
        finally:
            self._runs.pop(session_id, None)


async def _settle(future: Future[Any]) -> Any:
    """A recording step's result, awaited without blocking the event loop."""
    return await asyncio.wrap_future(future)


def _event_id(event: Event) -> str | None:
    return event.id or None


def _changes_state(event: Event) -> bool:
    actions = event.actions
    return bool(actions.state_delta or actions.artifact_delta)


def _marked(metadata: dict[str, Any] | None) -> dict[str, Any]:
    return {**(metadata or {}), RECORDED_MARK: True}


def _replayed_turns(host: list[Event], history: ReplayHistory) -> list[ReplayedEvents]:
    """Each replayed turn as ADK events: authored by the agent that gave the turn's answer (else the session's last
    agent), at the time of the host event it goes before (else after)."""
    by_id = {e.id: e for e in host if e.id}
    agents = [e.author for e in host if e.author and e.author != "user"]
    fallback_author = agents[-1] if agents else _DEFAULT_AUTHOR
    turns: list[ReplayedEvents] = []
    for turn in history.turns:
        answer = by_id.get(turn.assistant_message_id)
        started = by_id.get(turn.after_message_id)
        neighbour = answer or started
        author = answer.author if answer is not None else fallback_author
        timestamp = neighbour.timestamp if neighbour is not None else (host[-1].timestamp if host else 0.0)
        branch = neighbour.branch if neighbour is not None else None
        turns.append(
            ReplayedEvents(
                turn.assistant_message_id,
                turn.after_message_id,
                events_of_turn(turn.run_id, turn.messages, author=author, timestamp=timestamp, branch=branch),
            )
        )
    return turns


def _configured(events: list[Event], config: GetSessionConfig | None) -> list[Event]:
    """``GetSessionConfig`` as ADK's in-memory service applies it, to the spliced events."""
    if config is None:
        return events
    if config.num_recent_events is not None:
        events = events[-config.num_recent_events :] if config.num_recent_events > 0 else []
    if config.after_timestamp is not None:
        index = len(events) - 1
        while index >= 0 and events[index].timestamp >= config.after_timestamp:
            index -= 1
        events = events[index + 1 :]
    return events


def _with_pending_calls(events: list[Event], history: ReplayHistory) -> list[Event]:
    """Each call waiting for a person's approval (left out of the replayed turns) back right before ADK's request to
    confirm it, as the model asked for it: ADK's resume runs it from there."""
    pending = {p.tool_call_id: p for p in history.pending_approvals}
    if not pending:
        return events
    out: list[Event] = []
    for event in events:
        for confirmation_id, call_id in confirmation_requests(event).items():
            if call_id in pending:
                out.append(pending_call_event(pending.pop(call_id), confirmation_id, event))
        out.append(event)
    return out
