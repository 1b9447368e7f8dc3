"""The OpenAI Agents SDK adapter: record a run's tool calls and replay them into the next run.

Recording reads what the SDK keeps of a run (a ``RunResult``'s ``raw_responses`` and ``new_items``):
each model response that asked for function tools is a round, its calls in the response's order
with the outputs the model was sent; the calls that stopped the run for a person's approval; then
``RunCompleted`` with the tokens of every model call, or ``RunFailed``. A run that resumes a
``RunState`` after approvals records the answers and the approved calls' outputs, keyed by the
round and sequence of the run that asked. The recording core (``toolhistory._recording``) numbers,
orders and publishes it; this package maps the SDK's items onto it.

Replay hands the service's ``openai-responses`` history to ``Runner.run`` as input items.

Needs the ``openai-agents`` extra: ``pip install './clients/python[openai-agents]'`` from a checkout of the
repository, or the built wheel with it (``pip install 'toolhistory_client-0.1.0-py3-none-any.whl[openai-agents]'``).
"""

try:
    import agents  # noqa: F401 - the SDK this adapter needs
except ImportError as missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "toolhistory.openai_agents needs the OpenAI Agents SDK (the `agents` package): install the package with its "
        "openai-agents extra, e.g. pip install './clients/python[openai-agents]'"
    ) from missing

from toolhistory._recording import RecordedRound
from toolhistory.openai_agents._items import (
    describe_run_failure,
    final_output_text,
    parse_tool_arguments,
    provider_of_model,
    tool_result_of,
    usage_of,
)
from toolhistory.openai_agents._record import (
    AgentsRunRecord,
    ApprovalDecision,
    ApprovalRequest,
    ResumePoint,
    agents_run_record,
    resume_point_of,
)
from toolhistory.openai_agents._recorder import AgentsRunRecorder
from toolhistory.openai_agents._replay import history_input
from toolhistory.openai_agents._runs import (
    STREAM_CANCELLED,
    RecordedStreamedRun,
    recorded_run,
    recorded_run_streamed,
)
from toolhistory.openai_agents._session import ToolHistorySession
from toolhistory.openai_agents._session_items import MESSAGE_ID_KEY
from toolhistory.openai_agents._tool_errors import (
    DEFAULT_TOOL_ERROR_TEXT,
    ToolErrorTest,
    is_sdk_tool_error,
    tool_error_function,
)

__all__ = [
    "DEFAULT_TOOL_ERROR_TEXT",
    "MESSAGE_ID_KEY",
    "STREAM_CANCELLED",
    "AgentsRunRecord",
    "AgentsRunRecorder",
    "ApprovalDecision",
    "ApprovalRequest",
    "RecordedRound",
    "RecordedStreamedRun",
    "ResumePoint",
    "ToolErrorTest",
    "ToolHistorySession",
    "agents_run_record",
    "describe_run_failure",
    "final_output_text",
    "history_input",
    "is_sdk_tool_error",
    "parse_tool_arguments",
    "provider_of_model",
    "recorded_run",
    "recorded_run_streamed",
    "resume_point_of",
    "tool_error_function",
    "tool_result_of",
    "usage_of",
]
