import type { GetReplayHistoryResponse, Omission, PendingApproval, Turn } from './generated/toolhistory/v1/toolhistory';
import { CLIENT_HISTORY_FORMATS, type HistoryFormatName, type HistoryMessages } from './history-formats';

/**
 * A replayed run, with everything the service says of it (generated from the
 * proto): `runId`, `status`, `assistantMessageId` (the host's final answer,
 * empty unless completed), `afterMessageId` (the host's message that started
 * the run, empty when the producer gave none), and `rounds`, each with its
 * `resumedFromRunId` and calls (`interrupted`, `approval`, ...), and the
 * model's response in it when one was recorded: `provider`, `model`,
 * `text`, the reasoning replayed (`reasoningJson`, `callSignatures`,
 * `callItemIds`), else why not (`reasoningOmitted`), and whether a Gemini
 * call got the placeholder signature (`reasoningPlaceholder`).
 */
export interface ReplayedTurn<M> extends Turn {
  /** This turn's tool segment in the requested format, parsed. */
  messages: M[];
}

export interface ReplayHistory<M> {
  /** Every turn's messages, concatenated in order: ready to pass to the API. */
  messages: M[];
  turns: ReplayedTurn<M>[];
  /** Every call left out, and why. */
  omitted: Omission[];
  /** The tokens (o200k_base) of the tool names, arguments and results replayed. */
  historyTokens: number;
  /**
   * Calls waiting for a person's approval, oldest first: left out of the
   * turns (OMISSION_REASON_AWAITING_APPROVAL), listed so the host can ask
   * again, then publish the answer with `run.approvalDecided`.
   */
  pendingApprovals: PendingApproval[];
}

/**
 * The typed result of a GetReplayHistory response: each turn's messages
 * parsed (or, for a format built here, made from its rounds for the
 * `provider` the request named).
 */
export function replayHistoryOf<F extends HistoryFormatName>(
  response: GetReplayHistoryResponse,
  format: F,
  provider?: string,
): ReplayHistory<HistoryMessages[F]> {
  const { fromRounds } = CLIENT_HISTORY_FORMATS[format];
  const turns = response.turns.map((turn) => ({
    ...turn,
    messages: (fromRounds === undefined
      ? JSON.parse(turn.messagesJson || '[]')
      : fromRounds(turn.rounds, provider)) as HistoryMessages[F][],
  }));
  return {
    messages: turns.flatMap((turn) => turn.messages),
    turns,
    omitted: response.omitted,
    historyTokens: response.historyTokens,
    pendingApprovals: response.pendingApprovals,
  };
}
