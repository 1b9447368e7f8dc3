import { deriveEventId } from './event-ids';
import { type MaxResultChars, resultCharLimit, serializeFittedEvent } from './payload-truncation';
import { applyPersistHook, hasPersistHooks, type PersistOption, persistHookFor } from './persist-hook';
import type { PendingEvent, RunScope } from './run-publisher';
import { InvalidToolEventError } from './tool-history-errors';
import type { JsonValue, ToolEventType } from './tool-event-types';

/** The event version this package publishes. */
export const PUBLISHED_SCHEMA_VERSION = 2;

/** The limits the publisher cuts payloads to, and its persist hooks (see ToolEventPublisherOptions). */
export interface PayloadLimits {
  maxEventBytes: number;
  maxResultChars?: MaxResultChars;
  persist?: PersistOption;
}

/** An event as it goes to the broker. */
export interface PreparedEvent {
  eventId: string;
  type: ToolEventType;
  /** The event's JSON: the message value. */
  value: string;
}

/**
 * What ToolEventPublisher sends for a run's pending events: each with its
 * envelope (derived event id and `now` unless overridden), checked against
 * the contract and cut to the limits, in order, after the persist hooks ran on
 * its payloads. Throws InvalidToolEventError for the first event that is
 * invalid or cannot be made to fit (PersistHookError for a hook that throws),
 * so a batch is sent whole or not at all. For a host that sends the events itself (e.g.
 * through an outbox): a RunPublisher over a Publish function that calls this.
 */
export function prepareEvents(scope: RunScope, events: readonly PendingEvent[], limits: PayloadLimits, now = new Date()): PreparedEvent[] {
  return events.map(({ identity, overrides, fields, toolName }) => {
    const eventId = overrides.eventId ?? deriveEventId(scope, identity);
    const occurredAt = overrides.occurredAt ?? now;
    const event: Record<string, unknown> = {
      eventId,
      type: identity.type,
      schemaVersion: PUBLISHED_SCHEMA_VERSION,
      tenantId: scope.tenantId,
      conversationId: scope.conversationId,
      channel: scope.channel,
      runId: scope.runId,
      occurredAt: occurredAt instanceof Date ? occurredAt.toISOString() : occurredAt,
      ...(scope.userMessageId === undefined ? {} : { userMessageId: scope.userMessageId }),
      ...persistedFields(identity.type, fields, toolName, limits.persist),
    };
    // A withheld result is null: there is no text to cut.
    const maxResultChars =
      identity.type === 'ToolResultReceived' && event.result !== null ? resultCharLimit(limits.maxResultChars, toolName) : undefined;
    return { eventId, type: identity.type, value: serializeFittedEvent(event, { maxEventBytes: limits.maxEventBytes, maxResultChars }) };
  });
}

/**
 * An event's fields with its payload as the persist hook answered, and
 * `producerRedacted` with the producer's choice whenever a hook ran on it
 * (whatever it answered: the event says the producer's rules applied).
 */
function persistedFields(
  type: ToolEventType,
  fields: Record<string, unknown>,
  toolName: string | undefined,
  persist: PersistOption | undefined,
): Record<string, unknown> {
  const kind = type === 'ToolCallRequested' ? 'arguments' : type === 'ToolResultReceived' ? 'result' : undefined;
  if (kind === undefined || !hasPersistHooks(persist)) return fields;
  // A call without a valid toolName is refused by the contract check that follows.
  if (toolName === undefined && kind === 'arguments') return fields;
  if (toolName === undefined) {
    throw new InvalidToolEventError([
      'toolName is required with a result when the publisher has persist hooks (give it, or publish the call with the same RunPublisher)',
    ]);
  }
  const hook = persistHookFor(persist, toolName);
  if (hook === undefined) return fields;
  const kept = applyPersistHook(hook, fields[kind] as JsonValue, { kind, toolName });
  return {
    ...fields,
    [kind]: kept.payload,
    ...(kept.originalBytes === undefined ? {} : { originalBytes: kept.originalBytes }),
    producerRedacted: true,
    redaction: { persist: kept.persist },
  };
}
