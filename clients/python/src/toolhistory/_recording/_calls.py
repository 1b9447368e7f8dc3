"""A run's calls as it numbers them, and the call each result answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolhistory._recording._records import RecordedCall, RecordedRound

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolhistory._recording._records import AskedCall


@dataclass
class _Entry:
    call: RecordedCall
    group: int
    """The round it came in: a round of this run, or an earlier run's call or round this run answers."""
    answered: bool = False


class RecordedCalls:
    """A run's calls as it numbers them.

    Each model response that asks for tools is the next round (from ``first_round_index``, 0 unless the run goes on
    with an earlier run's numbering), its calls in the order the model gave them. Also the calls of earlier runs this
    run resumes, at the places they had there. Results find their call here.
    """

    def __init__(self, first_round_index: int = 0) -> None:
        self._next_round_index = first_round_index
        self._entries: list[_Entry] = []
        self._groups = 0

    @property
    def next_round(self) -> int:
        """The index the next round gets."""
        return self._next_round_index

    def open_round(self, asked: Sequence[AskedCall]) -> RecordedRound | None:
        """The next round, its calls numbered; ``None``, and no round counted, when the response asked for none."""
        if not asked:
            return None
        round_index = self._next_round_index
        self._next_round_index += 1
        calls = tuple(
            RecordedCall(round_index, sequence_index, call.tool_call_id, call.tool_name, call.arguments)
            for sequence_index, call in enumerate(asked)
        )
        self._add_group(calls)
        return RecordedRound(round_index, calls)

    def add_earlier(self, call: RecordedCall) -> RecordedCall:
        """A call of an earlier run that this run answers (a resumed call), at the place it had in that run."""
        self._add_group([call])
        return call

    def add_earlier_round(self, calls: Sequence[RecordedCall]) -> None:
        """A round of an earlier run, numbered there, whose calls this run may answer."""
        self._add_group(calls)

    def latest(self, tool_call_id: str) -> RecordedCall | None:
        """The latest call of that id, answered or not."""
        return next((entry.call for entry in reversed(self._entries) if entry.call.tool_call_id == tool_call_id), None)

    def open(self, tool_call_id: str, tool_name: str | None = None) -> RecordedCall | None:
        """The unanswered call a result of that id answers: of the latest round that has one, the first in call order
        (ids may repeat, or be empty), preferring one of ``tool_name`` when it is given."""
        candidates = [
            entry for entry in self._entries if not entry.answered and entry.call.tool_call_id == tool_call_id
        ]
        if not candidates:
            return None
        of_round = [entry.call for entry in candidates if entry.group == candidates[-1].group]
        return next((call for call in of_round if call.tool_name == tool_name), of_round[0])

    def answer(self, call: RecordedCall) -> None:
        """Notes that the call has its result: later results of its id answer another."""
        for entry in self._entries:
            if entry.call is call:
                entry.answered = True
                return

    def _add_group(self, calls: Sequence[RecordedCall]) -> None:
        group = self._groups
        self._groups += 1
        self._entries.extend(_Entry(call, group) for call in calls)
