"""The run-recording core: the recorded-run types, defined once, and RunRecording, which every adapter maps its
framework's callbacks or items onto (numbering, approvals and resumed placement, cited sources, fitting the contract,
ending once, ordered publishing). Internal: the adapters' modules re-export what their users need."""

from toolhistory._recording._calls import RecordedCalls
from toolhistory._recording._fit import (
    ABORTED,
    MAX_APPROVAL_REASON_LENGTH,
    MAX_FAILURE_MESSAGE_LENGTH,
    aborted_failure,
    bounded_usage,
    fitted_failure,
    fitted_reason,
    token_count,
)
from toolhistory._recording._outbox import OrderedPublications, PublishFailure, ToolHistoryPublishError
from toolhistory._recording._placement import (
    CallPosition,
    ListedApproval,
    PendingApproval,
    PlacedBy,
    PlacedCall,
    WaitingRun,
    call_position_in_messages,
    resumed_call_position,
    waiting_run,
)
from toolhistory._recording._publishers import RunPublishers
from toolhistory._recording._records import (
    ApprovalDecision,
    AskedCall,
    RecordedCall,
    RecordedDecision,
    RecordedResponse,
    RecordedResult,
    RecordedRound,
    ResponseReasoning,
    RunRecord,
    ToolOutcome,
    decision_on,
    result_of,
)
from toolhistory._recording._run_recording import AfterFailedStep, FailedRunEnd, RunEnd, RunRecording
from toolhistory._recording._steps import RecordingSteps

__all__ = [
    "ABORTED",
    "MAX_APPROVAL_REASON_LENGTH",
    "MAX_FAILURE_MESSAGE_LENGTH",
    "AfterFailedStep",
    "ApprovalDecision",
    "AskedCall",
    "CallPosition",
    "FailedRunEnd",
    "ListedApproval",
    "OrderedPublications",
    "PendingApproval",
    "PlacedBy",
    "PlacedCall",
    "PublishFailure",
    "RecordedCall",
    "RecordedCalls",
    "RecordedDecision",
    "RecordedResponse",
    "RecordedResult",
    "RecordedRound",
    "RecordingSteps",
    "ResponseReasoning",
    "RunEnd",
    "RunPublishers",
    "RunRecord",
    "RunRecording",
    "ToolHistoryPublishError",
    "ToolOutcome",
    "WaitingRun",
    "aborted_failure",
    "bounded_usage",
    "call_position_in_messages",
    "decision_on",
    "fitted_failure",
    "fitted_reason",
    "result_of",
    "resumed_call_position",
    "token_count",
    "waiting_run",
]
