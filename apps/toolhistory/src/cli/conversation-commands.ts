import { HISTORY_FORMAT_LIST, HISTORY_FORMATS, type HistoryFormat } from '@toolhistory/contract';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { PostgresConversationForker, PostgresReplayReader } from '@toolhistory/persistence';
import { ForkConversation } from '../fork-conversation/fork-conversation';
import { o200kTokens } from '@toolhistory/tokenizer';
import { EraseConversation } from '../erasure/erase-conversation';
import { conversationEraser } from '../erasure/conversation-eraser';
import { loadPolicyFile } from '../policy/load-policy-file';
import { GetReplayHistory } from '../replay/get-replay-history';
import type { CliContext, CliOutput } from './cli-context';

/** The CLI's names of the replay formats: the clients' names (the contract's HISTORY_FORMATS). */
const FORMATS: Readonly<Record<string, HistoryFormat>> = Object.fromEntries(
  HISTORY_FORMAT_LIST.map((format) => [HISTORY_FORMATS[format].client, format]),
);
export const REPLAY_FORMAT_NAMES: readonly string[] = Object.keys(FORMATS);

export interface ReplayOptions {
  format: string;
  asOf?: string;
  channel?: string;
  maxHistoryTokens?: string;
  json?: boolean;
}

/** The history as a model would get it at the start of a turn, and each call left out with its reason. */
export async function replayConversation(
  context: CliContext,
  output: CliOutput,
  tenantId: string,
  conversationId: string,
  options: ReplayOptions,
): Promise<void> {
  const format = FORMATS[options.format];
  const problems: string[] = [];
  if (!format) problems.push(`--format must be one of ${Object.keys(FORMATS).join(', ')}, not "${options.format}"`);
  const asOf = options.asOf === undefined ? undefined : Date.parse(options.asOf);
  if (asOf !== undefined && Number.isNaN(asOf)) problems.push(`--as-of "${options.asOf}" is not a time: write an ISO 8601 time`);
  const maxHistoryTokens = options.maxHistoryTokens === undefined ? undefined : Number(options.maxHistoryTokens);
  if (maxHistoryTokens !== undefined && !Number.isInteger(maxHistoryTokens)) problems.push('--max-history-tokens must be a whole number');
  if (problems.length > 0) throw new AppError(ErrorCode.InvalidArgument, problems.join('; '));

  const policy = loadPolicyFile(context.config.policyFile).replay;
  const vault = (await context.encryption())?.vault ?? null;
  const replay = new GetReplayHistory(new PostgresReplayReader(context.database(), undefined, vault), policy, { tokens: o200kTokens });
  const history = await replay.execute({ tenantId, conversationId, format, asOf, channel: options.channel, maxHistoryTokens });
  if (options.json) return output.out(JSON.stringify(history));
  output.err(`${history.turns.length} run(s) replayed, ${history.historyTokens} tokens, ${history.omitted.length} call(s) left out`);
  for (const turn of history.turns) {
    output.out(`# run ${turn.runId}`);
    output.out(JSON.stringify(turn.messages, null, 2));
  }
  if (history.omitted.length > 0) output.out('# left out');
  for (const o of history.omitted) {
    const by = o.invalidatedBy ? ` by ${o.invalidatedBy}` : '';
    output.out(`run ${o.runId} round ${o.roundIndex} call ${o.sequenceIndex} ${o.toolName} (${o.toolCallId || 'no id'}): ${o.reason}${by}`);
  }
}

/** Erases a conversation: its events and every row made from them, as the EraseConversation RPC does. */
export async function eraseConversation(
  context: CliContext,
  output: CliOutput,
  tenantId: string,
  conversationId: string,
  options: { yes?: boolean },
): Promise<void> {
  if (!options.yes) {
    throw new AppError(ErrorCode.InvalidArgument, `erasing ${tenantId}/${conversationId} cannot be undone: add --yes to mean it`);
  }
  const eraser = conversationEraser(context.database(), context.config, context.events(), await context.encryption());
  const outcome = await new EraseConversation(eraser).execute({ tenantId, conversationId });
  output.out(`erased ${tenantId}/${conversationId}: ${outcome.erasedEvents} event(s), ${outcome.erasedInvocations} invocation(s)`);
  if (outcome.forks?.length) {
    output.out(`and ${outcome.erasedCopies ?? 0} copied event(s) from its fork(s): ${outcome.forks.join(', ')}`);
  }
  if (outcome.destroyedKeys !== undefined) {
    output.out(
      `destroyed ${outcome.destroyedKeys.length} data key(s)${outcome.destroyedKeys.length ? `: ${outcome.destroyedKeys.join(', ')}` : ''}`,
    );
  }
}

/** Forks a conversation at a message, as the ForkConversation RPC does; prints the new conversation's consistency token. */
export async function forkConversation(
  context: CliContext,
  output: CliOutput,
  tenantId: string,
  conversationId: string,
  options: { upTo: string; to: string },
): Promise<void> {
  const vault = (await context.encryption())?.vault ?? null;
  const forker =
    context.config.eventStore.kind === 'eventstoredb' ? null : new PostgresConversationForker(context.database(), o200kTokens, vault);
  const forked = await new ForkConversation(forker).execute({
    tenantId,
    conversationId,
    upToMessageId: options.upTo,
    newConversationId: options.to,
  });
  output.err(`forked ${tenantId}/${conversationId} up to ${options.upTo} into ${options.to}: ${forked.copiedInvocations} invocation(s)`);
  output.out(forked.consistencyToken);
}
