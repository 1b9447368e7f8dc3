"""Record a LangGraph / LangChain agent's tool calls to toolhistory, and replay them as LangChain messages.

Recording: pass a :class:`ToolHistoryCallbackHandler` in the ``callbacks`` of
the agent's invocation (a LangGraph graph such as one with a ``ToolNode``, or
any runnable whose tool loop runs inside it); it maps LangChain's callbacks
onto the recording core (``toolhistory._recording``). Replay: turn a
:class:`toolhistory.replay.ReplayHistory` into LangChain messages with
:func:`to_langchain_messages`, or splice them into the host's conversation with
:func:`splice_tool_history`. Search: :func:`search_history_tool` gives the agent
a ``search_history`` tool over the tool calls of its own conversation.

Needs the ``langchain`` extra: ``pip install './clients/python[langchain]'`` from a checkout of the repository, or
the built wheel with it (``pip install 'toolhistory_client-0.1.0-py3-none-any.whl[langchain]'``). It brings
``langchain-core`` and ``langgraph``; a chat model's own package (``langchain-openai``, ...) is yours to add.
"""

try:
    import langchain_core  # noqa: F401 - the frameworks this adapter needs
    import langgraph  # noqa: F401
except ImportError as missing:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "toolhistory.langchain needs langchain-core and langgraph: install the package with its langchain extra, "
        "e.g. pip install './clients/python[langchain]'"
    ) from missing

from toolhistory._recording import PendingApproval, PublishFailure, ToolHistoryPublishError
from toolhistory.langchain._approvals import (
    ApprovalDecision,
    CallPosition,
    approval_decision_of,
    call_position_in,
    interrupt_id_of,
    interrupt_reason_of,
    resume_value_for,
)
from toolhistory.langchain._handler import ToolHistoryCallbackHandler
from toolhistory.langchain._messages import splice_tool_history, to_langchain_messages
from toolhistory.langchain._payloads import (
    ToolOutcome,
    bounded_usage,
    error_result_of,
    failure_of,
    to_json_object,
    to_json_value,
    token_usage_of,
    tool_calls_of,
    tool_messages_in,
    tool_outcome_of,
)
from toolhistory.langchain._search import (
    SEARCH_HISTORY_MAX_LIMIT,
    SEARCH_HISTORY_TOOL_DESCRIPTION,
    SEARCH_HISTORY_TOOL_NAME,
    SearchHistoryInput,
    search_history_answer,
    search_history_tool,
)

__all__ = [
    "SEARCH_HISTORY_MAX_LIMIT",
    "SEARCH_HISTORY_TOOL_DESCRIPTION",
    "SEARCH_HISTORY_TOOL_NAME",
    "ApprovalDecision",
    "CallPosition",
    "PendingApproval",
    "PublishFailure",
    "SearchHistoryInput",
    "ToolHistoryCallbackHandler",
    "ToolHistoryPublishError",
    "ToolOutcome",
    "approval_decision_of",
    "bounded_usage",
    "call_position_in",
    "error_result_of",
    "failure_of",
    "interrupt_id_of",
    "interrupt_reason_of",
    "resume_value_for",
    "search_history_answer",
    "search_history_tool",
    "splice_tool_history",
    "to_json_object",
    "to_json_value",
    "to_langchain_messages",
    "token_usage_of",
    "tool_calls_of",
    "tool_messages_in",
    "tool_outcome_of",
]
