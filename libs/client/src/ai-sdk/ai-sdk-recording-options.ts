import type { ModelMessage, OnFinishEvent, ToolSet, UIMessage } from 'ai';
import type { RunTarget } from '../run-target';
import type { KnownPendingApproval } from './ai-sdk-approvals';

/** How a call ended: the onFinish event of generateText or streamText, or generateText's (or an Agent's) result. */
export type FinishedCall<TOOLS extends ToolSet = ToolSet> = Pick<OnFinishEvent<TOOLS>, 'steps' | 'response' | 'text'>;

/** Where a call is recorded: one run's publisher, or a publisher and the run's scope (then `userMessageId` can be added to it). */
export type AiSdkRunTarget = RunTarget;

/** A tool call that needs approval, as `approvalReason` gets it. */
export interface ApprovalRequestCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

export interface RecordingOptions<TOOLS extends ToolSet = ToolSet> {
  /**
   * RunCompleted's `assistantMessageId`: the id of the host's final
   * assistant message of the run, or a function of the finished call.
   * Default: the final response's id.
   */
  assistantMessageId?: string | ((finished: FinishedCall<TOOLS>) => string);
  /**
   * The host's id of the message that started the run (every event carries
   * it; replay places a run without a final answer after it). Default: the
   * id of the last user message of `uiMessages`. Needs a `{ publisher,
   * scope }` target, or a RunPublisher whose scope already has it.
   */
  userMessageId?: string;
  /** The host's UI messages the call's `messages` were converted from (convertToModelMessages): their last user message's id is the default `userMessageId`. */
  uiMessages?: ReadonlyArray<Pick<UIMessage, 'id' | 'role'>>;
  /** Why a call needs approval, as shown to the person (ToolApprovalRequested's reason); default none, as the SDK gives none. */
  approvalReason?: (call: ApprovalRequestCall) => string | undefined;
  /**
   * The replay's calls awaiting approval (getReplayHistory's
   * `pendingApprovals`): where an answered call sat in the run that asked,
   * when its approval request is the SDK's own (see approvalAnswers).
   */
  pendingApprovals?: readonly KnownPendingApproval[];
  /** Who answered the approvals this call resumes, as the host names them (ToolApprovalDecided's decidedBy). */
  decidedBy?: string;
  /**
   * The call's input messages, for a call that is not given the recorder's
   * `prepareStep` (an Agent's generate): the approval answers among them are
   * then recorded when the first step finishes. The wrappers pass
   * `prepareStep`, which sees the messages itself.
   */
  messages?: readonly ModelMessage[];
  /**
   * true: RunCompleted's `citedSources` are the `[sourceN]` the answer
   * cites (citedSourcesFrom of the call's final `text`; with structured
   * `output`, the JSON text the model wrote), and `[]` when it cites none,
   * which drops every item of the results a policy `citations` rule names
   * from this run's replay. A run that ends without an answer (its last
   * step asked for tools, or for an approval) leaves them out: a later
   * run's answer may cite those results. Default false: left out, so the
   * run's results are replayed whole.
   */
  citedSourcesFromAnswer?: boolean;
}
