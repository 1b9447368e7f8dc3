"""Splicing replayed turns into the host's own conversation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from toolhistory.replay import ReplayHistory

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

H = TypeVar("H")
M = TypeVar("M")
M_co = TypeVar("M_co", covariant=True)


class SpliceableTurn(Protocol[M_co]):
    """What splicing needs of a replayed turn (a ``ReplayedTurn`` is one)."""

    @property
    def assistant_message_id(self) -> str | None:
        """The host's final assistant message of the run; empty or ``None`` when the run has none."""
        ...

    @property
    def after_message_id(self) -> str | None:
        """The host's message that started the run; empty or ``None`` when the producer gave none."""
        ...

    @property
    def messages(self) -> Sequence[M_co]:
        """The turn's tool segment."""
        ...


def host_branch(host_messages: Iterable[H], id_of: Callable[[H], str | None]) -> list[str]:
    """The host's current branch as ``get_replay_history``'s ``branch_message_ids`` takes it: the ids of its
    messages in order, each once, messages without one skipped.

    Splice a history fetched with it (``spliced_history`` of the clients does both), so runs the host's branch no
    longer holds (a regenerated answer, the messages after an edit) stay out.
    """
    ids: dict[str, None] = {}
    for message in host_messages:
        message_id = id_of(message)
        if isinstance(message_id, str) and message_id:
            ids.setdefault(message_id, None)
    return list(ids)


def default_id_of(message: object) -> str | None:
    """A host message's id when it says none: a mapping's ``"id"``, else an ``id`` attribute (LangChain's
    messages), when it is a non-empty string."""
    message_id = message.get("id") if isinstance(message, Mapping) else getattr(message, "id", None)
    return message_id if isinstance(message_id, str) and message_id else None


@overload
def splice_history(
    host_messages: Sequence[H], history: ReplayHistory, *, id_of: Callable[[H], str | None]
) -> list[H | Any]: ...
@overload
def splice_history(
    host_messages: Sequence[H], history: Iterable[SpliceableTurn[M]], *, id_of: Callable[[H], str | None]
) -> list[H | M]: ...
def splice_history(
    host_messages: Sequence[H],
    history: ReplayHistory | Iterable[SpliceableTurn[Any]],
    *,
    id_of: Callable[[H], str | None],
) -> list[Any]:
    """The host's own messages with each replayed turn's tool segment where the model saw it.

    - A turn with an assistant message id goes right before the host's message of that id (the run's
      final answer); when the host no longer has that message, the turn is left out: its answer is not
      in the conversation either.
    - A turn without one (a run that failed or is still running) goes right after the host's message it
      started from (``after_message_id``), else, when it names none or the host no longer has it, after
      the last host message: its calls were made, and the model must not make them again unaware.

    Several turns at the same place keep the turns' order. Host messages keep their order and all
    appear; ids match a host message's first occurrence. The inputs are not changed.

    Args:
        host_messages: the host's conversation, oldest first.
        history: a ``ReplayHistory``, or its turns (any objects with ``assistant_message_id``,
            ``after_message_id`` and ``messages``).
        id_of: the host's id of one of its messages, or ``None`` when it has none.
    """
    turns = history.turns if isinstance(history, ReplayHistory) else history
    index_of: dict[str, int] = {}
    for index, message in enumerate(host_messages):
        message_id = id_of(message)
        if message_id and message_id not in index_of:
            index_of[message_id] = index
    # By gap: gap i is right before host message i; gap len(host_messages) is after the last one.
    segments: dict[int, list[Any]] = {}
    for turn in turns:
        gap = _gap_of(turn, index_of, len(host_messages))
        if gap is not None:
            segments.setdefault(gap, []).extend(turn.messages)
    spliced: list[Any] = []
    for index, message in enumerate(host_messages):
        spliced.extend(segments.get(index, ()))
        spliced.append(message)
    spliced.extend(segments.get(len(host_messages), ()))
    return spliced


def _gap_of(turn: SpliceableTurn[Any], index_of: dict[str, int], end: int) -> int | None:
    if turn.assistant_message_id:
        return index_of.get(turn.assistant_message_id)
    after = index_of.get(turn.after_message_id) if turn.after_message_id else None
    return end if after is None else after + 1
