import type { BaseMessage } from '@langchain/core/messages';
import type { RecordedCall } from '../recording/recorded-run';
import { type KnownPendingApproval, resumedCallPosition } from '../recording/resumed-calls';
import { callPositionIn } from './langchain-approvals';

/** A call the model asked for (or an earlier run's call this run resumes), and how far it got. */
export interface TrackedCall {
  call: RecordedCall;
  /** As LangChain passes a tool run's input: to match a run to a call the model gave no id. */
  argumentsJson: string;
  /** A tool run is executing it: its end or error is the result. */
  claimed: boolean;
  answered: boolean;
  /** The tool interrupted (asked for approval); the run that resumes it may record the decision. */
  awaitingApproval?: { interruptId?: string };
}

/**
 * The calls of one agent run as LangChain's callbacks reveal them: a tool
 * run names its call by id, or (when the model gave none) by tool name and
 * arguments; a resumed graph runs a tool again for a call of an earlier run.
 */
export class LangChainCallTracker {
  private readonly calls: TrackedCall[] = [];

  constructor(private readonly pendingApprovals: readonly KnownPendingApproval[] | undefined) {}

  /** A round's calls, as the model asked for them. */
  track(calls: readonly RecordedCall[]): TrackedCall[] {
    const tracked = calls.map((call) => ({ call, argumentsJson: JSON.stringify(call.arguments), claimed: false, answered: false }));
    this.calls.push(...tracked);
    return tracked;
  }

  /**
   * The unanswered call a tool run or ToolMessage belongs to: by tool call
   * id; without one (the model gave none), by tool name and arguments, else
   * by name, the first in call order of the latest round that has one.
   * Claimed calls only when `includeClaimed`.
   */
  pending(
    toolCallId: string | undefined,
    toolName: string | undefined,
    includeClaimed: boolean,
    argumentsJson?: string,
  ): TrackedCall | undefined {
    const open = this.calls.filter((tracked) => !tracked.answered && (includeClaimed || !tracked.claimed));
    if (toolCallId) return latestRoundFirst(open.filter((tracked) => tracked.call.toolCallId === toolCallId));
    if (toolName === undefined) return undefined;
    const named = open.filter((tracked) => tracked.call.toolName === toolName);
    return latestRoundFirst(named.filter((tracked) => tracked.argumentsJson === argumentsJson)) ?? latestRoundFirst(named);
  }

  /**
   * A tool the resumed graph runs again for a call of an earlier run (one
   * this handler did not see asked for): tracked with the call's round and
   * sequence from `pendingApprovals`, else placed by the agent's messages.
   * LangGraph runs the whole tool node again, so the other calls of the
   * interrupted round run again too: without `pendingApprovals` a call is
   * taken as the one that waited only when it is its round's one call (which
   * call of several interrupted, the callbacks do not tell); the others'
   * first results are in the run that first ran them.
   */
  resumed(toolCallId: string | undefined, stateMessages: readonly BaseMessage[]): TrackedCall | undefined {
    if (!toolCallId || this.calls.some((tracked) => tracked.call.toolCallId === toolCallId)) return undefined;
    const placed = callPositionIn(stateMessages, toolCallId);
    const placedBy = resumedCallPosition(
      toolCallId,
      this.pendingApprovals === undefined
        ? { fromMessages: placed?.callsInRound === 1 ? placed : undefined }
        : { pendingApprovals: this.pendingApprovals },
    );
    if (placedBy === undefined) return undefined;
    const call: RecordedCall = { ...placedBy.position, toolCallId, toolName: placed?.toolName ?? '', arguments: {} };
    const tracked: TrackedCall = { call, argumentsJson: '', claimed: false, answered: false, awaitingApproval: {} };
    this.calls.push(tracked);
    return tracked;
  }

  /** The run paused: no tool run holds a call any more. */
  releaseAll(): void {
    for (const tracked of this.calls) tracked.claimed = false;
  }
}

/** The first (in call order) of the calls of the latest round among `calls`. */
function latestRoundFirst(calls: readonly TrackedCall[]): TrackedCall | undefined {
  const latest = calls.at(-1)?.call.roundIndex;
  return calls.find((tracked) => tracked.call.roundIndex === latest);
}
