"""A ToolEventPublisher's ``run`` that keeps the events it would send, for the framework stores' unit tests."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from toolhistory.consistency import kafka_consistency_token
from toolhistory.events import PublishedEvent, RunScope
from toolhistory.publisher import DEFAULT_TOOL_EVENTS_TOPIC, PendingEvent, PreparedEvent, RunPublisher, prepare_events

if TYPE_CHECKING:
    from collections.abc import Sequence

NOW = datetime(2026, 11, 2, 10, 15, 30, tzinfo=timezone.utc)


class RecordingPublisher:
    """A ToolEventPublisher's ``run``, keeping the events it would send (prepared as the publisher prepares them)."""

    def __init__(self) -> None:
        self.sent: list[PreparedEvent] = []

    def run(self, **scope: Any) -> RunPublisher:
        run_scope = RunScope(**scope)

        def send(events: Sequence[PendingEvent]) -> list[PublishedEvent]:
            prepared = prepare_events(run_scope, events, now=NOW)
            offset = len(self.sent)
            self.sent.extend(prepared)
            return [
                PublishedEvent(
                    e.event_id, e.type, 0, offset + i, kafka_consistency_token(DEFAULT_TOOL_EVENTS_TOPIC, 0, offset + i)
                )
                for i, e in enumerate(prepared)
            ]

        return RunPublisher(run_scope, send)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(event.value) for event in self.sent]
