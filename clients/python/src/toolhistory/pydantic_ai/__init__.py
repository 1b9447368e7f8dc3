"""PydanticAI adapter: record an agent run's tool calls, and replay them as ``message_history``.

Recording reads what PydanticAI keeps of a run (``result.new_messages()``): each ``ModelResponse``
with function tool calls is a round, each ``ToolReturnPart`` the result of its call (``outcome``
``'failed'`` or ``'retried'``, i.e. the tool raised ``ToolFailed`` or ``ModelRetry`` or its arguments
failed validation, is an error result), one usage entry per model response, then ``RunCompleted``.
Calls waiting for approval (``DeferredToolRequests``) are ``ToolApprovalRequested``; the run that
resumes with ``DeferredToolResults`` records the decisions and the approved calls' results with the
keys of the run that asked. ``recorded_run`` runs the agent and records it, ``RunFailed`` included.
The recording core (``toolhistory._recording``) numbers, orders and publishes what the messages say.

Replay turns a ``ReplayHistory`` fetched with ``format="bedrock-converse"`` into ``ModelMessage``
objects (``to_message_history``), or splices it into the host's own messages
(``splice_message_history``). That format keeps a JSON result as JSON (so PydanticAI serialises it
to the same text the model saw), flags errors (``status: "error"``, replayed as ``outcome='failed'``,
which every PydanticAI model sends through its provider's error channel) and gives ids every
provider accepts.

Needs the ``pydantic-ai`` extra: ``pip install './clients/python[pydantic-ai]'`` from a checkout of the repository,
or the built wheel with it (``pip install 'toolhistory_client-0.1.0-py3-none-any.whl[pydantic-ai]'``).
"""

try:
    import pydantic_ai  # noqa: F401 - the framework this adapter needs
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "toolhistory.pydantic_ai needs PydanticAI: install the package with its pydantic-ai extra, "
        "e.g. pip install './clients/python[pydantic-ai]'"
    ) from error

from toolhistory._recording import RecordedCall, RecordedDecision, RecordedResult, RecordedRound, RunRecord
from toolhistory.events import TokenUsage
from toolhistory.pydantic_ai._publish import (
    publish_run_failure,
    publish_run_record,
    publish_run_steps,
    record_failure,
    record_messages,
    recorded_run,
)
from toolhistory.pydantic_ai._record import (
    answer_text_of,
    arguments_of,
    is_default_output_tool,
    result_of,
    run_failure_of,
    run_record,
)
from toolhistory.pydantic_ai._replay import (
    REASONING_FORMATS,
    REPLAY_FORMAT,
    from_replay_messages,
    splice_message_history,
    to_message_history,
)

RecordedUsage = TokenUsage
"""One model call's tokens: the publisher's own `TokenUsage`."""

__all__ = [
    "REASONING_FORMATS",
    "REPLAY_FORMAT",
    "RecordedCall",
    "RecordedDecision",
    "RecordedResult",
    "RecordedRound",
    "RecordedUsage",
    "RunRecord",
    "answer_text_of",
    "arguments_of",
    "from_replay_messages",
    "is_default_output_tool",
    "publish_run_failure",
    "publish_run_record",
    "publish_run_steps",
    "record_failure",
    "record_messages",
    "recorded_run",
    "result_of",
    "run_failure_of",
    "run_record",
    "splice_message_history",
    "to_message_history",
]
