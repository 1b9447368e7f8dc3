import type { PendingApproval } from '../generated/toolhistory/v1/toolhistory';
import type { CallPosition } from './recorded-run';

/*
 * Where a resumed call goes: a run that resumes after a person's answer
 * records the answer and the call's result under the round and sequence
 * the call had in the run that asked, so every run names the call alike.
 */

/** What a recorder needs of a call awaiting approval, as getReplayHistory lists it in `pendingApprovals`. */
export type KnownPendingApproval = Pick<PendingApproval, 'toolCallId' | 'roundIndex' | 'sequenceIndex'>;

/** How a resumed call's place was found. */
export type PlacedBy = 'approval-id' | 'pending-approvals' | 'messages';

/** Where the call sat in the run that asked, by the only things a later run can know it from, best first. */
export interface ResumedCallSources {
  /** The place an id of this package's own carries (e.g. an approval id made from the replay's pending approval). */
  fromId?: CallPosition;
  /** The replay's pendingApprovals: the latest entry of the call's id (the replay lists them oldest first). */
  pendingApprovals?: readonly KnownPendingApproval[];
  /** The call's place read from the framework's messages (see callPositionInMessages), when the adapter trusts it. */
  fromMessages?: CallPosition;
}

/** The place of resumed call `toolCallId`, and what it was found from; undefined when nothing says it. */
export function resumedCallPosition(
  toolCallId: string,
  sources: ResumedCallSources,
): { position: CallPosition; placedBy: PlacedBy } | undefined {
  if (sources.fromId !== undefined) return { position: positionOf(sources.fromId), placedBy: 'approval-id' };
  const listed = [...(sources.pendingApprovals ?? [])].reverse().find((pending) => pending.toolCallId === toolCallId);
  if (listed !== undefined) return { position: positionOf(listed), placedBy: 'pending-approvals' };
  if (sources.fromMessages !== undefined) return { position: positionOf(sources.fromMessages), placedBy: 'messages' };
  return undefined;
}

const positionOf = ({ roundIndex, sequenceIndex }: CallPosition): CallPosition => ({ roundIndex, sequenceIndex });

/** How a framework's messages say which tools a message called and where a run starts. */
export interface CallReader<M> {
  /** The client-run tool calls the message asked for, in order (none for a message that asked for none). */
  callsOf(message: M): ReadonlyArray<{ id?: string; name: string }>;
  /** Whether a run starts right after this message (the user's message, or the answers a resumed run began with). */
  startsRun(message: M): boolean;
}

/** Where call `toolCallId` sits by the messages alone, with its tool and how many calls its round has. */
export interface PlacedCall extends CallPosition {
  toolName: string;
  callsInRound: number;
}

/**
 * Where the model's call `toolCallId` sits, by a run's messages: its index
 * among the calls of its message (the latest such message, should an id
 * repeat), and the count of earlier messages with calls since its run began.
 * Right when the messages hold the asking run as the framework returned it.
 */
export function callPositionInMessages<M>(messages: readonly M[], toolCallId: string, reader: CallReader<M>): PlacedCall | undefined {
  for (let at = messages.length - 1; at >= 0; at--) {
    const calls = reader.callsOf(messages[at]);
    const sequenceIndex = calls.findIndex((call) => call.id === toolCallId);
    if (sequenceIndex === -1) continue;
    let roundIndex = 0;
    for (let i = at - 1; i >= 0 && !reader.startsRun(messages[i]); i--) if (reader.callsOf(messages[i]).length > 0) roundIndex++;
    return { roundIndex, sequenceIndex, toolName: calls[sequenceIndex].name, callsInRound: calls.length };
  }
  return undefined;
}
