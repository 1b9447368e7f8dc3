import type { RunPublisher, RunScope, ToolEventPublisher } from './tool-event-publisher';

/**
 * Where an adapter records a run: one run's publisher, or a publisher and
 * the run's scope, from which the adapter opens the run itself (and can add
 * the user's message id it learns, e.g. from the agent's input).
 */
export type RunTarget = RunPublisher | { publisher: Pick<ToolEventPublisher, 'run'>; scope: RunScope };

/**
 * The run of `target`, with `userMessageId` when one is given. A
 * RunPublisher's scope is fixed: one whose scope has another (or no)
 * userMessageId is refused, rather than the id silently left out.
 */
export function runOfTarget(target: RunTarget, userMessageId: string | undefined): RunPublisher {
  if ('publisher' in target) return target.publisher.run(userMessageId === undefined ? target.scope : { ...target.scope, userMessageId });
  checkFixedScope(target, userMessageId);
  return target;
}

/** Throws when a RunPublisher's fixed scope cannot carry `userMessageId`. */
export function checkFixedScope(target: RunTarget, userMessageId: string | undefined): void {
  if ('publisher' in target || userMessageId === undefined || target.scope.userMessageId === userMessageId) return;
  throw new TypeError(
    `userMessageId: a RunPublisher's scope is fixed (it has ${JSON.stringify(target.scope.userMessageId)}, not ${JSON.stringify(userMessageId)}): ` +
      'pass { publisher, scope }, or give publisher.run() the userMessageId',
  );
}
