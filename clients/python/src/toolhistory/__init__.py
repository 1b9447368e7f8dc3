"""toolhistory's Python client: publish an agent's tool events, and replay them into its next turn.

- Publishing: ``ToolEventPublisher`` and a run's ``RunPublisher`` (the events of the contract, validated,
  with the same event ids as the TypeScript client, oversized payloads cut to fit).
- Reading: ``ToolHistoryClient`` (sync) and ``AsyncToolHistoryClient`` (asyncio), every RPC; ``splice_history``
  puts a replayed history among the host's own messages, ``host_branch`` names the host's current branch.
- Read-your-writes: every published event has a ``consistency_token``; this process's reads of a conversation
  wait for the last one it published there (``last_consistency_token``, for reads in another process).
- Adapters, each behind its extra: ``toolhistory.openai_agents`` (``[openai-agents]``), ``toolhistory.langchain``
  (``[langchain]``) and ``toolhistory.pydantic_ai`` (``[pydantic-ai]``). They are not imported here, so the package
  works without any framework installed.
"""

from toolhistory._grpc import (
    DEFAULT_TIMEOUT,
    HistoryView,
    InvocationStatusFilter,
    SearchMatch,
    StaleResults,
    SubscribedEvent,
    TlsConfig,
    TokenSource,
    UsageBucket,
)
from toolhistory._recording._records import ResponseReasoning
from toolhistory.aio import AsyncTokenSource, AsyncToolHistoryClient
from toolhistory.client import ToolHistoryClient
from toolhistory.consistency import kafka_consistency_token, last_consistency_token
from toolhistory.errors import (
    InvalidToolEventError,
    PersistHookError,
    PublishError,
    ToolHistoryClientError,
    ToolHistoryError,
)
from toolhistory.event_ids import TOOL_EVENT_ID_NAMESPACE, derive_event_id, name_based_uuid
from toolhistory.events import (
    EventType,
    JsonObject,
    JsonValue,
    MaxResultChars,
    MaxResultCharsByTool,
    PublishedEvent,
    RunFailure,
    RunScope,
    TokenUsage,
    ToolCall,
    ToolResult,
)
from toolhistory.formats import HISTORY_FORMATS, HistoryFormat, HistoryMessage
from toolhistory.persist import PayloadKind, PersistAnswer, PersistContext, PersistHook, PersistOption
from toolhistory.publisher import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_TOOL_EVENTS_TOPIC,
    PUBLISHED_SCHEMA_VERSION,
    PendingEvent,
    PreparedEvent,
    RunPublisher,
    Send,
    ToolEventPublisher,
    cited_sources_from,
    prepare_events,
)
from toolhistory.replay import ReplayedTurn, ReplayHistory
from toolhistory.splice import SpliceableTurn, host_branch, splice_history
from toolhistory.truncation import TRUNCATED_ARGUMENTS_KEY, TRUNCATION_TAIL, truncation_marker

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_EVENTS_TOPIC",
    "HISTORY_FORMATS",
    "PUBLISHED_SCHEMA_VERSION",
    "TOOL_EVENT_ID_NAMESPACE",
    "TRUNCATED_ARGUMENTS_KEY",
    "TRUNCATION_TAIL",
    "AsyncTokenSource",
    "AsyncToolHistoryClient",
    "EventType",
    "HistoryFormat",
    "HistoryMessage",
    "HistoryView",
    "InvalidToolEventError",
    "InvocationStatusFilter",
    "JsonObject",
    "JsonValue",
    "MaxResultChars",
    "MaxResultCharsByTool",
    "PayloadKind",
    "PendingEvent",
    "PersistAnswer",
    "PersistContext",
    "PersistHook",
    "PersistHookError",
    "PersistOption",
    "PreparedEvent",
    "PublishError",
    "PublishedEvent",
    "ReplayHistory",
    "ReplayedTurn",
    "ResponseReasoning",
    "RunFailure",
    "RunPublisher",
    "RunScope",
    "SearchMatch",
    "Send",
    "SpliceableTurn",
    "StaleResults",
    "SubscribedEvent",
    "TlsConfig",
    "TokenSource",
    "TokenUsage",
    "ToolCall",
    "ToolEventPublisher",
    "ToolHistoryClient",
    "ToolHistoryClientError",
    "ToolHistoryError",
    "ToolResult",
    "UsageBucket",
    "__version__",
    "cited_sources_from",
    "derive_event_id",
    "host_branch",
    "kafka_consistency_token",
    "last_consistency_token",
    "name_based_uuid",
    "prepare_events",
    "splice_history",
    "truncation_marker",
]
