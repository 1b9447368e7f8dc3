import type { PendingApproval } from '../generated/toolhistory/v1/toolhistory';
import type { RunTarget } from '../run-target';
import type { PublishFailure } from './ordered-publish-queue';

/** Where the handler publishes: one run's publisher, or a publisher and the run's scope. */
export type ToolHistoryRunTarget = RunTarget;

export interface ToolHistoryCallbackHandlerOptions {
  /** The host's final assistant message of the run; default: the id of the model's last output (LangChain's `run-<id>` when the model gave none). */
  assistantMessageId?: string;
  /** RunCompleted's finishReason when the agent ended right after executing tools (its last model output asked for tools); default `tool_limit`. */
  finishReasonAfterTools?: string;
  /**
   * true (default): LangChain awaits each publication, so the agent's
   * `invoke()` returns once the run's events are in the broker (every step
   * waits for the broker's acknowledgement). false: the agent does not wait;
   * await `settled()` before relying on the events.
   */
  awaitPublishing?: boolean;
  /** true: a failed publication fails the agent run (LangChain rethrows it). Default false: LangChain logs it, `settled()` rejects with it and `onPublishError` hears of it. */
  raiseError?: boolean;
  /** Called for every event that could not be published (and for a handler used for a second run). */
  onPublishError?: (failure: PublishFailure) => void;
  /**
   * The host's id of the message that started the run, carried by every
   * event. Default: the id of the last HumanMessage of the agent's input,
   * when the target is `{ publisher, scope }` (a RunPublisher's scope is
   * fixed: give it there).
   */
  userMessageId?: string;
  /**
   * true: an interrupt ends the run (RunCompleted, finishReason as after
   * tools), for a host that resumes the graph in a later run with another
   * handler. Default false: the run stays open and resuming with this
   * handler goes on with it.
   */
  interruptEndsRun?: boolean;
  /**
   * The calls awaiting approval that this run may resume, as the replay
   * lists them (getReplayHistory's `pendingApprovals`): a resumed tool's
   * call of an earlier run is recorded with its round and sequence from
   * here. Without them, the handler places it by the agent's messages (see
   * callPositionIn), which is right for a call of a run that began at the
   * user's message.
   */
  pendingApprovals?: ReadonlyArray<Pick<PendingApproval, 'toolCallId' | 'roundIndex' | 'sequenceIndex'>>;
  /** Who decided, when the resume value says it was approved or denied but not by whom. */
  decidedBy?: string;
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the answer
   * cites (citedSourcesFrom of the text of the model's last output), and
   * `[]` when it cites none, which drops every item of the results a
   * policy `citations` rule names from this run's replay. A run that ends
   * without an answer (its last output asked for tools, an interrupt ended
   * it, or no model output was seen) leaves them out: a later run's answer
   * may cite those results.
   * Default false: left out, so the run's results are replayed whole.
   */
  citedSourcesFromAnswer?: boolean;
}
