import type { AskedCall, RecordedCall, RecordedRound } from './recorded-run';

/**
 * A run's calls as it numbers them: each model response that asks for tools
 * is the next round (from `firstRoundIndex`, 0 unless the run goes on with
 * an earlier run's numbering), its calls in the order the model gave them.
 * Also the calls of earlier runs this run resumes, at the places they had
 * there. Results find their call here.
 */
export class RecordedCalls {
  private nextRoundIndex: number;
  /** Each call with the round it came in (a round of this run, or an earlier run's call or round this run answers). */
  private readonly entries: Array<{ call: RecordedCall; group: number; answered: boolean }> = [];
  private groups = 0;

  constructor(firstRoundIndex = 0) {
    this.nextRoundIndex = firstRoundIndex;
  }

  /** How many rounds were opened (the next round's index, less the first). */
  get nextRound(): number {
    return this.nextRoundIndex;
  }

  /** The next round, its calls numbered; undefined, and no round counted, when the response asked for none. */
  openRound(asked: readonly AskedCall[]): RecordedRound | undefined {
    if (asked.length === 0) return undefined;
    const roundIndex = this.nextRoundIndex++;
    const calls = asked.map(({ toolCallId, toolName, arguments: args }, sequenceIndex) => ({
      roundIndex,
      sequenceIndex,
      toolCallId,
      toolName,
      arguments: args,
    }));
    this.addGroup(calls);
    return { roundIndex, calls, results: [], approvalRequests: [] };
  }

  /** A call of an earlier run that this run answers (a resumed call), at the place it had in that run. */
  addEarlier(call: RecordedCall): RecordedCall {
    this.addGroup([call]);
    return call;
  }

  /** A round of an earlier run, numbered there, whose calls this run may answer. */
  addEarlierRound(calls: readonly RecordedCall[]): void {
    this.addGroup(calls);
  }

  /** The latest call of that id, answered or not: what an output of that id answers when ids are unique. */
  latest(toolCallId: string): RecordedCall | undefined {
    for (let at = this.entries.length - 1; at >= 0; at--) if (this.entries[at].call.toolCallId === toolCallId) return this.entries[at].call;
    return undefined;
  }

  /**
   * The unanswered call a result of that id answers: of the latest round
   * that has one, the first in call order (ids may repeat, or be empty),
   * preferring one of `toolName` when it is given.
   */
  open(toolCallId: string, toolName?: string): RecordedCall | undefined {
    const candidates = this.entries.filter((entry) => !entry.answered && entry.call.toolCallId === toolCallId);
    const latestGroup = candidates.at(-1)?.group;
    const ofRound = candidates.filter((entry) => entry.group === latestGroup).map((entry) => entry.call);
    return ofRound.find((call) => call.toolName === toolName) ?? ofRound[0];
  }

  /** Whether the call was answered (a result recorded for it). */
  isAnswered(call: RecordedCall): boolean {
    return this.entries.find((entry) => entry.call === call)?.answered ?? false;
  }

  /** Notes that the call has its result: later results of its id answer another. */
  answer(call: RecordedCall): void {
    const entry = this.entries.find((candidate) => candidate.call === call);
    if (entry !== undefined) entry.answered = true;
  }

  private addGroup(calls: readonly RecordedCall[]): void {
    const group = this.groups++;
    for (const call of calls) this.entries.push({ call, group, answered: false });
  }
}
