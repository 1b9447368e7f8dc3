"""Microsoft Agent Framework adapter: ``ToolHistoryProvider``, a history provider for ``context_providers`` that keeps
an agent's tool calls in toolhistory and every other message in the history provider the host already uses.

Needs the ``agent-framework`` extra: ``pip install './clients/python[agent-framework]'`` from a checkout of the
repository.
"""

try:
    import agent_framework  # noqa: F401 - the framework this adapter needs
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "toolhistory.agent_framework needs Microsoft Agent Framework: install the package with its agent-framework "
        "extra, e.g. pip install './clients/python[agent-framework]'"
    ) from error

from toolhistory.agent_framework._provider import REPLAY_FORMAT, ToolHistoryProvider

__all__ = ["REPLAY_FORMAT", "ToolHistoryProvider"]
