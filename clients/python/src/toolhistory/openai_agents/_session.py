"""ToolHistorySession: the SDK's ``Session`` over the host's own session, with the tool calls kept by toolhistory."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from toolhistory._recording import (
    AskedCall,
    RecordedCall,
    ResponseReasoning,
    RunEnd,
    RunPublishers,
    RunRecording,
    ToolOutcome,
    decision_on,
    result_of,
    waiting_run,
)
from toolhistory.openai_agents._items import (
    field_of,
    function_call_of,
    function_output_call_id,
    parse_tool_arguments,
    plain,
)
from toolhistory.openai_agents._session_items import (
    MESSAGE_ID_KEY,
    _calls_follow,
    _is_assistant_message,
    _is_tool_item,
    _is_user_message,
    _last_user_message_id,
    _message_id_of,
    _message_text,
    _output_text,
    _outputs_as_sent,
    _replayed_key,
    _rounds,
    _TurnView,
    _without_id,
)
from toolhistory.openai_agents._tool_errors import ToolErrorTest, is_sdk_tool_error
from toolhistory.splice import splice_history

if TYPE_CHECKING:
    from collections.abc import Sequence
    from concurrent.futures import Future

    from agents import RunContextWrapper, TResponseInputItem
    from agents.memory import Session, SessionSettings

    from toolhistory.aio import AsyncToolHistoryClient
    from toolhistory.replay import ReplayHistory

_DEFAULT_MODEL = "unspecified"


@dataclass
class _OpenRun:
    """The run the session records now: from a user message to the answer that follows its calls."""

    recording: RunRecording
    user_message_id: str | None
    awaiting: dict[str, RecordedCall] = field(default_factory=dict)
    """Calls that stopped the run for a person's approval, by call id, until their output comes."""


@dataclass(frozen=True)
class _Placed:
    """An item of the session's view, and where it lives."""

    item: TResponseInputItem
    inner: bool
    message_id: str | None = None


class ToolHistorySession:
    """The SDK's ``Session`` that keeps the tool calls in toolhistory and everything else in ``inner``.

    ``add_items`` sends function calls and their outputs to toolhistory through the recording core (a run per user
    message, ended by the answer that follows its calls; a call left without an output stops it for a person's
    approval, and the output a ``RunState`` resume brings is recorded with the person's answer) and every other item to
    ``inner``, each with an id (``MESSAGE_ID_KEY``). ``get_items`` returns ``inner``'s items with the replayed calls
    where the model saw them: the service applies its replay rules (freshness, invalidation, interrupted side
    effects, approvals, the token budget) and the host's branch (the ids of ``inner``'s items). A failed call's
    output comes back as the SDK sent it.

    ``pop_item`` removes the last item of that view: an item of ``inner`` from ``inner`` (a popped user message
    takes its runs off the branch, a popped answer the calls of its run), a replayed item from this session's view
    only (toolhistory keeps what was recorded). ``clear_session`` clears ``inner`` and, with ``erase=True``, erases
    the conversation's recorded calls; without it they stay for audit, off every later branch.
    """

    def __init__(
        self,
        inner: Session,
        *,
        publisher: RunPublishers,
        client: AsyncToolHistoryClient,
        tenant_id: str,
        channel: str,
        conversation_id: str | None = None,
        is_tool_error: ToolErrorTest | None = None,
        model: str | None = None,
        provider: str | None = "openai",
    ) -> None:
        """``inner``: the host's own session (its items other than tool calls). ``publisher``: a
        ``ToolEventPublisher``. ``client``: the asynchronous client the replay is read with. ``conversation_id``:
        default, ``inner``'s session id. ``is_tool_error``: which outputs are failures (default: the SDK's own error
        texts, ``is_sdk_tool_error``). ``model``: the model the agent calls, recorded with a round's reasoning items
        and asked for by the replay, which then leaves out reasoning recorded for another model (default: any
        OpenAI model's; recorded as ``unspecified``). ``provider``: the provider a round's reasoning items are
        recorded through: ``openai`` (default) for the SDK's OpenAI models; name the provider whose own items the
        agent's model gives, or ``None`` for a model whose provider you cannot tell (a LiteLLM model), which then
        records no reasoning rather than a wrong provider's."""
        if not tenant_id or not channel:
            raise ValueError("ToolHistorySession needs a non-empty tenant_id and channel")
        self.inner = inner
        self.session_id: str = inner.session_id
        self.session_settings: SessionSettings | None = getattr(inner, "session_settings", None)
        self.conversation_id = conversation_id or inner.session_id
        self._publisher = publisher
        self._client = client
        self._tenant_id = tenant_id
        self._channel = channel
        self._is_tool_error = is_tool_error or is_sdk_tool_error
        self._model = model or _DEFAULT_MODEL
        self._replay_model = model or None
        self._provider = provider
        self._run: _OpenRun | None = None
        self._user_message_id: str | None = None
        self._hidden: set[str] = set()
        self._lock = asyncio.Lock()

    async def get_items(
        self, limit: int | None = None, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """The latest ``limit`` items (without it, the session settings' ``limit``, else all), oldest first:
        ``inner``'s with the replayed calls in place."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        # The latest ``limit`` of the view hold at most ``limit`` of inner's items, its latest: only those are read.
        view = await self._view(wrapper, limit)
        items = [placed.item for placed in view]
        if limit is None:
            return items
        return items[max(0, len(items) - limit) :] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem], wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Records the function calls and their outputs, and adds every other item to ``inner``."""
        async with self._lock:
            own: list[TResponseInputItem] = []
            tools: list[TResponseInputItem] = []
            answer_id: str | None = None
            asks = any(function_call_of(item) is not None for item in items)
            for at, item in enumerate(items):
                # A reasoning item goes with the round of calls it came with (replayed before them, in its turn); one
                # before an answer stays in inner, before the answer. So does the text the model said beside its
                # calls, recorded with its round (when its provider is known) and replayed in its place, between the
                # rounds: in inner it would come before every round of the run.
                if (
                    _is_tool_item(item)
                    or (asks and field_of(item, "type") == "reasoning")
                    or (self._provider and _is_assistant_message(item) and _calls_follow(items, at))
                ):
                    tools.append(item)
                    # The answer is an assistant message no call follows (one before calls is the text beside them).
                    if function_call_of(item) is not None:
                        answer_id = None
                    continue
                message_id = uuid.uuid4().hex
                own.append(cast("TResponseInputItem", {**cast("Mapping[str, Any]", item), MESSAGE_ID_KEY: message_id}))
                if _is_user_message(item):
                    # A run that ended without an answer (its turn limit, an approval not given, an error) is closed
                    # by the next question, which stands for its answer: its calls are replayed right before it.
                    await self._end_run(
                        RunEnd(assistant_message_id=message_id, stopped_for_approval=self._awaiting_approval())
                    )
                    self._user_message_id = message_id
                elif _is_assistant_message(item):
                    answer_id = message_id
            # An output whose call toolhistory does not have (one added to inner before it was decorated) stays there.
            for round_items in _rounds(tools):
                own.extend(await self._record(round_items, wrapper))
            if own:
                await _call(self.inner.add_items, own, wrapper=wrapper)
            if answer_id is not None:
                await self._end_run(RunEnd(assistant_message_id=answer_id, ended_after_tools=False))

    async def pop_item(self, wrapper: RunContextWrapper[Any] | None = None) -> TResponseInputItem | None:
        """Removes and returns the last item of the view (``None`` when it is empty)."""
        async with self._lock:
            view = await self._view(wrapper)
            if not view:
                return None
            last = view[-1]
            if not last.inner:
                self._hidden.add(_replayed_key(last.item))
                return last.item
            popped = await _call(self.inner.pop_item, wrapper=wrapper)
            return _without_id(popped) if popped is not None else None

    async def clear_session(self, wrapper: RunContextWrapper[Any] | None = None, *, erase: bool = False) -> None:
        """Clears ``inner`` and this session's replay; ``erase=True`` also erases the conversation's recorded calls
        (``EraseConversation``), which otherwise stay for audit."""
        async with self._lock:
            await _call(self.inner.clear_session, wrapper=wrapper)
            if self._run is not None:
                await self._end_run(RunEnd(stopped_for_approval=self._awaiting_approval()))
            self._user_message_id = None
            self._hidden.clear()
            if erase:
                await self._client.erase_conversation(tenant_id=self._tenant_id, conversation_id=self.conversation_id)

    async def _view(self, wrapper: RunContextWrapper[Any] | None, limit: int | None = None) -> list[_Placed]:
        own = list(await _call(self.inner.get_items, limit, wrapper=wrapper))
        if not own:
            return []
        history = await self._replay(own)
        placed = [_Placed(_without_id(item), True, _message_id_of(item)) for item in own]
        spliced = splice_history(
            placed,
            [
                _TurnView(turn.assistant_message_id, turn.after_message_id, _outputs_as_sent(turn))
                for turn in history.turns
            ],
            id_of=lambda entry: entry.message_id,
        )
        view = [entry if isinstance(entry, _Placed) else _Placed(entry, inner=False) for entry in spliced]
        return [entry for entry in view if entry.inner or _replayed_key(entry.item) not in self._hidden]

    async def _replay(self, own: Sequence[TResponseInputItem]) -> ReplayHistory:
        branch = [message_id for message_id in map(_message_id_of, own) if message_id]
        return await self._client.get_replay_history(
            tenant_id=self._tenant_id,
            conversation_id=self.conversation_id,
            format="openai-responses",
            channel=self._channel,
            branch_message_ids=branch,
            model=self._replay_model,
        )

    async def _record(
        self, items: Sequence[TResponseInputItem], wrapper: RunContextWrapper[Any] | None
    ) -> list[TResponseInputItem]:
        """One batch the SDK saves after a model response: its calls (a round), then the outputs it has so far. Returns
        the outputs of calls no run here or in toolhistory waits for."""
        asked = [call for call in map(function_call_of, items) if call is not None]
        outputs = [(call_id, item) for item in items if (call_id := function_output_call_id(item)) is not None]
        futures: list[Future[Any]] = []
        if asked:
            asking = self._run or self._start_run(self._user_message_id)
            text = "".join(_message_text(item) for item in items if _is_assistant_message(item)) or None
            round_ = asking.recording.response(
                calls=[AskedCall(call_id, name, parse_tool_arguments(arguments)) for call_id, name, arguments in asked],
                text=text,
                reasoning=self._reasoning_of(items, text),
            )
            if round_ is not None:
                futures.append(asking.recording.publish_calls(round_.calls))
        results = []
        unknown: list[TResponseInputItem] = []
        for call_id, item in outputs:
            run = self._run or await self._resumed_run(call_id)
            call = run.recording.calls.open(call_id) if run is not None else None
            if run is None or call is None:
                unknown.append(item)
                continue
            run.recording.calls.answer(call)
            text = _output_text(item)
            waited = run.awaiting.pop(call_id, None)
            approved = True
            if waited is not None:
                decided = wrapper.is_tool_approved(call.tool_name, call_id) if wrapper is not None else None
                approved = decided is not False
                published = run.recording.publish_decision(
                    decision_on(call, approved, None if approved else text or None)
                )
                if published is not None:
                    futures.append(published)
            if approved:
                results.append(result_of(call, ToolOutcome(text or "", self._is_tool_error(call_id, text))))
        if results and self._run is not None:
            futures.append(self._run.recording.publish_results(results))
        if asked and self._run is not None:
            answered = {call_id for call_id, _ in outputs}
            for call_id, _name, _arguments in asked:
                call = self._run.recording.calls.open(call_id)
                if call_id not in answered and call is not None:
                    self._run.awaiting[call_id] = call
                    request = self._run.recording.publish_approval_request(call)
                    if request is not None:
                        futures.append(request)
        await _settled(futures)
        return [
            cast("TResponseInputItem", {**cast("Mapping[str, Any]", item), MESSAGE_ID_KEY: uuid.uuid4().hex})
            for item in unknown
        ]

    def _reasoning_of(self, items: Sequence[TResponseInputItem], text: str | None) -> ResponseReasoning | None:
        """The reasoning items a response gave with its calls, and the calls' own item ids (the API wants them back
        together); with none, the response's provider and model alone when it said something beside its calls (the
        text is recorded with them)."""
        reasoning = [plain(item) for item in items if field_of(item, "type") == "reasoning"]
        if not self._provider or (not reasoning and not text):
            return None
        if not reasoning:
            return ResponseReasoning(provider=self._provider, model=self._model)
        item_ids = {
            call[0]: item_id
            for item in items
            if (call := function_call_of(item)) is not None and isinstance(item_id := field_of(item, "id"), str)
        }
        return ResponseReasoning(
            provider=self._provider,
            model=self._model,
            items=tuple(cast("dict[str, Any]", entry) for entry in reasoning if isinstance(entry, dict)),
            call_item_ids=item_ids,
        )

    def _start_run(self, user_message_id: str | None, run_id: str | None = None, first_round: int = 0) -> _OpenRun:
        publisher = self._publisher.run(
            tenant_id=self._tenant_id,
            conversation_id=self.conversation_id,
            channel=self._channel,
            run_id=run_id or f"run-{uuid.uuid4().hex}",
            user_message_id=user_message_id,
        )
        self._run = _OpenRun(RunRecording(publisher, first_round_index=first_round), user_message_id)
        return self._run

    async def _resumed_run(self, call_id: str) -> _OpenRun | None:
        """The run that asked for approval of ``call_id`` in another process (a ``RunState`` resumed elsewhere), as the
        replay lists it, going on here; ``None`` when no run waits for it."""
        own = list(await _call(self.inner.get_items))
        history = await self._replay(own)
        pending = next((p for p in history.pending_approvals if p.tool_call_id == call_id), None)
        waiting = waiting_run(pending.run_id, history.pending_approvals, history.turns) if pending is not None else None
        if pending is None or waiting is None:
            return None
        turn = next((t for t in history.turns if t.run_id == pending.run_id), None)
        user_message_id = (turn.after_message_id if turn is not None else "") or _last_user_message_id(own)
        run = self._start_run(user_message_id, pending.run_id, waiting.next_round_index)
        for call in waiting.calls:
            run.recording.calls.add_earlier(call)
            run.awaiting[call.tool_call_id] = call
        return run

    def _awaiting_approval(self) -> bool:
        return self._run is not None and bool(self._run.awaiting)

    async def _end_run(self, end: RunEnd) -> None:
        run, self._run = self._run, None
        if run is not None:
            await asyncio.wrap_future(run.recording.complete(end))


async def _settled(futures: Sequence[Future[Any]]) -> None:
    """Waits until each publication is acknowledged (read-your-writes: the next ``get_items`` includes it); the first
    failure is raised."""
    for future in futures:
        await asyncio.wrap_future(future)


async def _call(method: Any, *args: Any, wrapper: RunContextWrapper[Any] | None = None) -> Any:
    """Calls a method of ``inner``, with the run's context when it takes one (the SDK's own convention)."""
    if wrapper is not None and "wrapper" in inspect.signature(method).parameters:
        return await method(*args, wrapper=wrapper)
    return await method(*args)
