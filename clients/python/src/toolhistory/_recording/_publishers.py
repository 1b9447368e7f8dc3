"""What the framework stores need of a publisher: one run's publisher, by the run's ids."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolhistory.publisher import RunPublisher


class RunPublishers(Protocol):
    """Gives a run's publisher (``ToolEventPublisher.run`` is one): the stores start a run per user message."""

    def run(
        self, *, tenant_id: str, conversation_id: str, channel: str, run_id: str, user_message_id: str | None = None
    ) -> RunPublisher: ...
