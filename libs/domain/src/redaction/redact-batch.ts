import type { StoredToolEvent } from '@toolhistory/contract';
import type { InvocationRow } from '../projection/read-model.types';
import { redactToolEvent } from './redact-event';
import type { RedactionPolicy } from './redaction-policy';
import { toolNameFor, toolNamesByInvocation } from './tool-names';

/** Where the tools of a batch's results may be named besides the batch: calls recorded before, as events or as read-model rows. */
export interface RecordedToolNames {
  calls?: Iterable<StoredToolEvent>;
  rows?: Iterable<InvocationRow>;
}

/**
 * The recording step of redaction, the one place a recorder applies it: each
 * event of a batch by its tool's rule (a result by the rule of its call, in
 * the batch or recorded before; by the default rule while its call is
 * unknown), in the schema version it was received in, which is how it is
 * stored.
 */
export function redactBatch(
  events: readonly StoredToolEvent[],
  policy: RedactionPolicy,
  recorded: RecordedToolNames = {},
): StoredToolEvent[] {
  const names = batchToolNames(events, recorded);
  return events.map((event) => redactToolEvent(event, policy, toolNameFor(names, event)));
}

/** The tool of each invocation of the batch, where the batch or what was recorded before names it (see toolNameFor). */
export function batchToolNames(events: readonly StoredToolEvent[], recorded: RecordedToolNames = {}): Map<string, string> {
  return toolNamesByInvocation([...(recorded.calls ?? []), ...events], recorded.rows);
}

/** Whether a result of the batch has no call in it: its tool is then to be looked up among what was recorded before. */
export function hasResultWithoutItsCall(events: readonly StoredToolEvent[]): boolean {
  const names = toolNamesByInvocation(events);
  return events.some((event) => event.type === 'ToolResultReceived' && toolNameFor(names, event) === null);
}
