"""Ordered publishing: a run's steps reach the broker one after the other, in the order they were asked for."""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

from toolhistory.errors import ToolHistoryClientError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from toolhistory.events import PublishedEvent

_Published = TypeVar("_Published")


@dataclass(frozen=True)
class PublishFailure:
    """One publication that did not reach the broker (or was refused before it was sent)."""

    event: str
    """What was being published, e.g. ``ToolResultReceived round 0 call 1 (get_customer call_b)``."""
    error: BaseException


class ToolHistoryPublishError(ToolHistoryClientError):
    """Some of a run's events were not published: each failure, and what the broker did acknowledge. Retriable when
    every failure is."""

    def __init__(self, failures: Sequence[PublishFailure], published: Sequence[PublishedEvent]) -> None:
        self.failures: tuple[PublishFailure, ...] = tuple(failures)
        self.published: tuple[PublishedEvent, ...] = tuple(published)
        self.retriable = bool(self.failures) and all(
            getattr(failure.error, "retriable", False) is True for failure in self.failures
        )
        listed = "; ".join(f"{failure.event}: {failure.error}" for failure in self.failures)
        super().__init__(f"{len(self.failures)} tool history event(s) not published: {listed}")


class OrderedPublications:
    """Publishes one step after the other, in the order they were submitted, whether or not an earlier one failed.

    A run's events stay in order on the conversation's partition even when several threads ask at once (parallel
    tools, or the executor threads a framework runs its callbacks on): the caller submits a step while it holds its
    own state's lock, and one worker thread runs the steps, first in first out. The future is the step's own outcome;
    what was acknowledged and what failed is kept for ``settled()``.
    """

    def __init__(self, on_failure: Callable[[PublishFailure], None] | None = None) -> None:
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._closed = False
        self._tail: Future[object] | None = None
        self._acknowledged: list[PublishedEvent] = []
        self._failures: list[PublishFailure] = []

    @property
    def failed(self) -> bool:
        """Whether a step failed (or a failure was recorded) so far."""
        with self._lock:
            return bool(self._failures)

    @property
    def first_failure(self) -> PublishFailure | None:
        with self._lock:
            return self._failures[0] if self._failures else None

    def submit(self, event: str, step: Callable[[], _Published]) -> Future[_Published]:
        """Runs ``step`` once every step submitted before it has finished."""

        def run() -> _Published:
            try:
                published = step()
            except BaseException as error:
                self.record_failure(PublishFailure(event=event, error=error))
                raise
            produced: object = published
            with self._lock:
                if isinstance(produced, list):
                    self._acknowledged.extend(cast("list[PublishedEvent]", produced))
                elif produced is not None:
                    self._acknowledged.append(cast("PublishedEvent", produced))
            return published

        with self._lock:
            if self._closed:
                raise RuntimeError(f"{event} after the run ended")
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolhistory-publish")
            future = self._worker.submit(run)
            self._tail = cast("Future[object]", future)
        return future

    def record_failure(self, failure: PublishFailure) -> None:
        """A failure that is no publication (e.g. the adapter used wrongly) is reported like one."""
        with self._lock:
            self._failures.append(failure)
        if self._on_failure is not None:
            # The listener's own failure must not hide the recorded one.
            with contextlib.suppress(Exception):
                self._on_failure(failure)

    def close(self) -> None:
        """No more steps: the worker thread ends once the submitted ones have run."""
        with self._lock:
            self._closed = True
            if self._worker is not None:
                self._worker.shutdown(wait=False)

    def drained(self, timeout: float | None = None) -> None:
        """Waits until every step submitted so far (and any submitted meanwhile) has finished, whatever its outcome."""
        while True:
            with self._lock:
                tail = self._tail
            if tail is None:
                return
            # The step's own error is recorded as a failure: only its end matters here.
            tail.exception(timeout)
            with self._lock:
                if tail is self._tail:
                    return

    def settled(self, timeout: float | None = None) -> list[PublishedEvent]:
        """The acknowledged events in publication order, once every step has finished; raises
        ToolHistoryPublishError when any failed."""
        self.drained(timeout)
        with self._lock:
            if self._failures:
                raise ToolHistoryPublishError(self._failures, self._acknowledged)
            return list(self._acknowledged)
