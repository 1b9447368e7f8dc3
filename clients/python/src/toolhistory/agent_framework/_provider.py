"""``ToolHistoryProvider``: the framework's history provider with the tool calls kept by toolhistory."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_framework import Content, HistoryProvider, Message

from toolhistory._recording import (
    AskedCall,
    FailedRunEnd,
    RecordedResult,
    RunEnd,
    RunPublishers,
    RunRecording,
    ToolOutcome,
    decision_on,
    result_of,
    waiting_run,
)
from toolhistory.agent_framework._messages import (
    _arguments,
    _call_id,
    _is_question,
    _is_tool_message,
    _message_id,
    _result_text,
    _trimmed,
    _TurnView,
)
from toolhistory.events import RunFailure
from toolhistory.formats import HistoryFormat
from toolhistory.splice import host_branch, splice_history

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agent_framework import AgentSession, SessionContext, SupportsAgentRun

    from toolhistory.aio import AsyncToolHistoryClient

REPLAY_FORMAT: HistoryFormat = "openai"
"""The format the replay is read in (OpenAI chat completions), turned into the framework's own messages."""

_log = logging.getLogger("toolhistory.agent_framework")
_APPROVAL_RESPONSE = "function_approval_response"


@dataclass
class _OpenRun:
    """The run being recorded: from a user message to the answer that follows its calls."""

    run_id: str
    recording: RunRecording
    messages: list[Message] = field(default_factory=list)
    """Its messages of tool use so far: the next service call of the run sees them as they are."""
    asked: set[str] = field(default_factory=set)
    """The calls asked a person's approval for."""
    deferred: list[Message] = field(default_factory=list)
    """Rounds waiting for the ids the framework gives calls without one."""


class ToolHistoryProvider(HistoryProvider):
    """A history provider that keeps function calls, their results and approvals in toolhistory and every other
    message in ``inner``.

    ``save_messages`` records the messages with function calls, function results and function approval requests and
    responses through the recording core (a run per user message, ended by the answer that follows its calls; a
    function approval request as the call's ``ToolApprovalRequested``, and the person's response, which the framework
    gives the next run as its input, as ``ToolApprovalDecided`` in the run that asked) and saves every other message
    to ``inner``, each with a ``message_id``. A failed function's result is recorded as an error with the framework's
    text, and comes back with that text. ``get_messages`` returns ``inner``'s messages with the replayed calls where
    the model saw them, subject to toolhistory's replay rules (freshness, orphans, approvals, the token budget, the
    host's branch: the ids of ``inner``'s messages).

    ``per_service_call`` follows the agent's ``require_per_service_call_history_persistence`` (they must agree): with
    it, each service call's calls and results are recorded as the call returns, and a run that stopped half way (the
    process crashed, the model raised) is ended as failed by the next user message: on a channel with
    ``per_service_call`` visibility its finished rounds still replay. Without it, a run is recorded when it ends, at
    once, and function results after the run's last model response are left out (the model never saw them), as the
    framework's per-run persistence does.
    """

    def __init__(
        self,
        inner: HistoryProvider,
        *,
        publisher: RunPublishers,
        client: AsyncToolHistoryClient,
        tenant_id: str,
        channel: str,
        conversation_id: str | None = None,
        per_service_call: bool = False,
        replay_options: Mapping[str, Any] | None = None,
    ) -> None:
        """
        Args:
            inner: the history provider that keeps every other message (e.g. ``InMemoryHistoryProvider``); this
                provider takes its ``source_id`` and storage flags, and gives it the same provider state.
            publisher: a ``ToolEventPublisher``: its runs are the agent's runs.
            client: the asynchronous client the replay is read with.
            tenant_id: the tenant of the conversation.
            channel: the channel the runs are recorded in and replayed for (its policy applies).
            conversation_id: the conversation (default: the session's id).
            per_service_call: record after each service call (the agent's
                ``require_per_service_call_history_persistence``); default per run.
            replay_options: further ``get_replay_history`` arguments (``freshness_window_seconds``, ...).
        """
        if not tenant_id or not channel:
            raise ValueError("ToolHistoryProvider needs a non-empty tenant_id and channel")
        super().__init__(
            inner.source_id,
            load_messages=inner.load_messages,
            store_inputs=inner.store_inputs,
            store_context_messages=inner.store_context_messages,
            store_context_from=inner.store_context_from,
            store_outputs=inner.store_outputs,
        )
        self.inner = inner
        self.publisher = publisher
        self.client = client
        self.tenant_id = tenant_id
        self.channel = channel
        self.conversation_id = conversation_id
        self.per_service_call = per_service_call
        self.replay_options = dict(replay_options or {})
        self._runs: dict[str, _OpenRun] = {}
        self._lock = asyncio.Lock()

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        required = bool(getattr(agent, "require_per_service_call_history_persistence", False))
        if required != self.per_service_call:
            raise ValueError(
                f"ToolHistoryProvider(per_service_call={self.per_service_call}) is used by an agent with "
                f"require_per_service_call_history_persistence={required}: give both the same value"
            )
        conversation_id = self._conversation_of(context.session_id)
        if conversation_id is not None:
            async with self._lock:
                answers = [c for m in context.input_messages for c in m.contents if c.type == _APPROVAL_RESPONSE]
                if answers:
                    # The person's answers resume the run that asked (the framework's own resume path), which another
                    # process may have started.
                    await self._resume(conversation_id, answers, context.session_id, state)
                    await _settled(self._decide(conversation_id, answers))
                elif any(_is_question(m) for m in context.input_messages):
                    # A new question: a run of this conversation that never answered (it raised, or stopped) ends as
                    # failed before the history is read, so its rounds come back by the channel's visibility.
                    await self._end_unanswered(conversation_id)
        await super().before_run(agent=agent, session=session, context=context, state=state)

    # -- reading: inner's messages with the replay in its places ------------------------------------------------

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        own = await self.inner.get_messages(session_id, state=state, **kwargs)
        conversation_id = self._conversation_of(session_id)
        if not own or conversation_id is None:
            return own
        history = await self.client.get_replay_history(
            tenant_id=self.tenant_id,
            conversation_id=conversation_id,
            format=REPLAY_FORMAT,
            channel=self.channel,
            branch_message_ids=host_branch(own, _message_id),
            **self.replay_options,
        )
        # The run going on here is given as it is (the replay has only what it recorded so far), after its question.
        going_on = self._runs.get(conversation_id)
        turns = [_TurnView.of(t) for t in history.turns if going_on is None or t.run_id != going_on.run_id]
        spliced: list[Message] = splice_history(own, turns, id_of=_message_id)
        return spliced + (going_on.messages if going_on is not None else [])

    # -- writing: tool messages to toolhistory, the rest to inner -----------------------------------------------

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        conversation_id = self._conversation_of(session_id)
        if conversation_id is None:
            # Without a session there is no conversation to record in: the messages stay the inner provider's.
            await self.inner.save_messages(session_id, messages, state=state, **kwargs)
            return
        batch = list(messages) if self.per_service_call else _trimmed(messages)
        async with self._lock:
            own: list[Message] = []
            futures: list[Future[Any]] = []
            waiting = self._runs.get(conversation_id)
            if waiting is not None:
                futures.extend(self._record_deferred(waiting, batch))
            answered_by: str | None = None
            for message in batch:
                if _is_tool_message(message):
                    run = self._runs.get(conversation_id) or self._start(conversation_id, None)
                    futures.extend(self._record_deferred(run, batch))
                    futures.extend(self._record(run, message))
                    run.messages.append(message)
                    answered_by = None
                    continue
                if not message.message_id:
                    message.message_id = uuid.uuid4().hex
                own.append(message)
                if _is_question(message):
                    await self._end_unanswered(conversation_id)
                    self._start(conversation_id, message.message_id)
                elif message.role == "assistant":
                    answered_by = message.message_id
                    answering = self._runs.get(conversation_id)
                    if answering is not None:
                        # The model's response after the results: the service then knows the model saw them.
                        answering.recording.response(text=message.text or None, message_id=message.message_id)
            await _settled(futures)
            if own:
                await self.inner.save_messages(session_id, own, state=state, **kwargs)
            open_run = self._runs.get(conversation_id)
            if open_run is not None and (answered_by is not None or not (self.per_service_call or open_run.asked)):
                # Per run, the run ends with its batch, answered or not (its last results trimmed), unless it waits
                # for a person: the answer resumes it.
                self._runs.pop(conversation_id, None)
                await asyncio.wrap_future(open_run.recording.complete(RunEnd(assistant_message_id=answered_by)))

    def _record_deferred(self, run: _OpenRun, batch: Sequence[Message]) -> list[Future[Any]]:
        """The rounds deferred for their ids, with the ids the framework gave them: their results, which come next,
        answer the round's calls in order."""
        futures: list[Future[Any]] = []
        deferred, run.deferred = run.deferred, []
        answers = next((m for m in batch if any(c.type == "function_result" for c in m.contents)), None)
        results = [c for c in answers.contents if c.type == "function_result"] if answers is not None else []
        for message in deferred:
            calls = [c for c in message.contents if c.type == "function_call"]
            named = {c.call_id for c in calls if c.call_id}
            ids = [
                c.call_id
                or (results[i].call_id if i < len(results) and results[i].call_id not in named else None)
                or ""
                for i, c in enumerate(calls)
            ]
            futures.extend(self._record(run, message, call_ids=ids))
        return futures

    def _record(self, run: _OpenRun, message: Message, *, call_ids: Sequence[str] | None = None) -> list[Future[Any]]:
        """One message of tool use: the model's calls (a round, with the text beside them), results, approvals."""
        recording = run.recording
        futures: list[Future[Any]] = []
        calls = [c for c in message.contents if c.type == "function_call"]
        if calls and call_ids is None and not all(_call_id(c) for c in calls):
            # A call the model gave no id gets the framework's when it runs, after this service call is persisted:
            # the round is recorded then, with the ids the model is shown again.
            run.deferred.append(message)
            return futures
        if calls:
            round_ = recording.response(
                calls=[
                    AskedCall(
                        call_ids[i] if call_ids is not None else _call_id(c), c.name or "", _arguments(c.arguments)
                    )
                    for i, c in enumerate(calls)
                ],
                text=message.text or None,
            )
            if round_ is not None:
                futures.append(recording.publish_calls(round_.calls))
        results: list[RecordedResult] = []
        for content in message.contents:
            if content.type == "function_result":
                call = recording.calls.open(content.call_id or "")
                if call is None:
                    continue
                recording.calls.answer(call)
                results.append(result_of(call, ToolOutcome(_result_text(content), content.exception is not None)))
            elif content.type == "function_approval_request" and content.function_call is not None:
                futures.extend(self._ask(run, content.function_call.call_id or ""))
        if results:
            futures.append(recording.publish_results(results))
        return futures

    def _ask(self, run: _OpenRun, call_id: str) -> list[Future[Any]]:
        """The call waits for a person's approval (once)."""
        call = run.recording.calls.open(call_id)
        if call is None or call_id in run.asked:
            return []
        run.asked.add(call_id)
        request = run.recording.publish_approval_request(call)
        return [request] if request is not None else []

    def _decide(self, conversation_id: str, answers: Sequence[Content]) -> list[Future[Any]]:
        """The person's answers, as decisions on the calls of the open run they answer (asked for first when the
        framework did not persist the request: per service call it does not)."""
        run = self._runs.get(conversation_id)
        futures: list[Future[Any]] = []
        for answer in answers:
            call_id = answer.function_call.call_id if answer.function_call is not None else None
            call = run.recording.calls.latest(call_id) if run is not None and call_id else None
            if run is None or call is None or call_id is None:
                _log.warning("approval response %r answers no call of an open run of %s", answer.id, conversation_id)
                continue
            futures.extend(self._ask(run, call_id))
            decided = run.recording.publish_decision(decision_on(call, bool(answer.approved)))
            if decided is not None:
                futures.append(decided)
        return futures

    async def _resume(
        self, conversation_id: str, answers: Sequence[Content], session_id: str | None, state: dict[str, Any]
    ) -> None:
        """Opens here the run the answers resume when this provider object did not see it ask (another process
        did): its waiting calls as the replay lists them, and its message of calls as the model gave it."""
        answered = {a.function_call.call_id for a in answers if a.function_call is not None and a.function_call.call_id}
        open_run = self._runs.get(conversation_id)
        if not answered or (open_run is not None and all(open_run.recording.calls.latest(c) for c in answered)):
            return
        history = await self.client.get_replay_history(
            tenant_id=self.tenant_id, conversation_id=conversation_id, format=REPLAY_FORMAT, channel=self.channel
        )
        asking = next((p for p in reversed(history.pending_approvals) if p.tool_call_id in answered), None)
        waiting = waiting_run(asking.run_id, history.pending_approvals, history.turns) if asking is not None else None
        if asking is None or waiting is None:
            return
        own = await self.inner.get_messages(session_id, state=state)
        question = next((m.message_id for m in reversed(own) if _is_question(m)), None)
        await self._end_unanswered(conversation_id)
        run = self._start(conversation_id, question, run_id=asking.run_id, first_round_index=waiting.next_round_index)
        calls: list[Content] = []
        for call in waiting.calls:
            run.recording.calls.add_earlier(call)
            run.asked.add(call.tool_call_id)
            calls.append(Content.from_function_call(call.tool_call_id, call.tool_name, arguments=call.arguments))
        first = next(p for p in history.pending_approvals if p.run_id == asking.run_id)
        text = first.round.text if first.HasField("round") else ""
        run.messages.append(Message("assistant", [*([Content.from_text(text)] if text else []), *calls]))

    def _start(
        self,
        conversation_id: str,
        user_message_id: str | None,
        *,
        run_id: str | None = None,
        first_round_index: int = 0,
    ) -> _OpenRun:
        run_id = run_id or f"run-{uuid.uuid4().hex}"
        publisher = self.publisher.run(
            tenant_id=self.tenant_id,
            conversation_id=conversation_id,
            channel=self.channel,
            run_id=run_id,
            user_message_id=user_message_id,
        )
        run = _OpenRun(run_id, RunRecording(publisher, first_round_index=first_round_index))
        self._runs[conversation_id] = run
        return run

    async def _end_unanswered(self, conversation_id: str) -> None:
        """A run that never answered (the process stopped it, or it raised) ends as failed."""
        run = self._runs.pop(conversation_id, None)
        if run is None:
            return
        failure = RunFailure("interrupted", "the conversation's next user message came before this run answered")
        await asyncio.wrap_future(run.recording.fail(FailedRunEnd(failure)))

    def _conversation_of(self, session_id: str | None) -> str | None:
        return self.conversation_id or session_id


async def _settled(futures: Sequence[Future[Any]]) -> None:
    """Waits until each publication is acknowledged (read-your-writes: the next ``get_messages`` includes it)."""
    for future in futures:
        await asyncio.wrap_future(future)
