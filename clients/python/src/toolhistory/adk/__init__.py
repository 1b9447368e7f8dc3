"""Google ADK adapter: ``ToolHistorySessionService``, a session service that keeps an agent's tool calls in
toolhistory and every other event in the session service the host already uses.

Pass it to the ``Runner`` as ``session_service``, with the host's own service as ``inner``: events with function
calls (with Gemini's thought signatures and thoughts) and function responses are recorded through the recording core
(``toolhistory._recording``), each round as it happens, and ``get_session`` gives the session's events back with the
replayed calls in their places (``format="gemini"``, ADK's own contents). The session's id is the conversation id.

Needs the ``adk`` extra: ``pip install './clients/python[adk]'`` from a checkout of the repository.
"""

try:
    import google.adk  # noqa: F401 - the framework this adapter needs
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "toolhistory.adk needs Google ADK: install the package with its adk extra, "
        "e.g. pip install './clients/python[adk]'"
    ) from error

from toolhistory.adk._events import REPLAY_FORMAT, events_of_turn, result_of
from toolhistory.adk._session_service import ToolHistorySessionService

__all__ = ["REPLAY_FORMAT", "ToolHistorySessionService", "events_of_turn", "result_of"]
