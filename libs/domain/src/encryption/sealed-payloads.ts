import type { JsonValue, SealedPayload, StoredToolEvent } from '@toolhistory/contract';
import type { KeyScope, PayloadVault } from '../ports/payload-vault.port';

/**
 * What is sealed at rest (docs/adr/033): the members of each event type that
 * carry what the agent, the tool or a person wrote. Ids, names, times,
 * sizes, usage and approval facts stay in clear, for billing and audit.
 * A new event type with text of its own adds its entry here, and is sealed
 * with the rest.
 */
export const PAYLOAD_MEMBERS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  ToolCallRequested: Object.freeze(['arguments']),
  ToolResultReceived: Object.freeze(['result']),
  ToolApprovalRequested: Object.freeze(['reason']),
  ToolApprovalDecided: Object.freeze(['reason']),
  // The round's own text; its reasoning state rests apart, sealed too (reasoning-apart.ts).
  ModelResponseReceived: Object.freeze(['text']),
});

/** What an event without its payload holds in the members that must be there (the contract's shapes). */
const EMPTY_MEMBERS: Readonly<Record<string, JsonValue>> = Object.freeze({ arguments: {}, result: null });

type EventRecord = Record<string, unknown>;

const membersOf = (event: { type: string }): readonly string[] =>
  Object.hasOwn(PAYLOAD_MEMBERS, event.type) ? PAYLOAD_MEMBERS[event.type] : [];

/** The event's payload members present on it, as one object; null when it has none. */
export function payloadOf(event: StoredToolEvent): Record<string, JsonValue> | null {
  const record = event as unknown as EventRecord;
  const payload: Record<string, JsonValue> = {};
  let any = false;
  for (const member of membersOf(event)) {
    if (record[member] === undefined) continue;
    payload[member] = record[member] as JsonValue;
    any = true;
  }
  return any ? payload : null;
}

/** The event as stored when its payload is sealed: the payload members left out, `sealed` in their place. */
export function storedForm<E extends StoredToolEvent>(event: E): E {
  if (event.sealed === undefined) return event;
  const out: EventRecord = {};
  const members = membersOf(event);
  for (const [key, value] of Object.entries(event)) if (!members.includes(key) && key !== 'payloadExpired') out[key] = value;
  return out as E;
}

/** The event a reader sees: the payload members as they were sealed, with the note of where they rest. */
function withPayload<E extends StoredToolEvent>(event: E, payload: Record<string, unknown>): E {
  return { ...event, ...payload } as E;
}

/** An event whose data key is gone: the members that must be there hold nothing, the rest are absent. */
function withoutItsPayload<E extends StoredToolEvent>(event: E): E {
  const empty: EventRecord = {};
  for (const member of membersOf(event)) if (Object.hasOwn(EMPTY_MEMBERS, member)) empty[member] = EMPTY_MEMBERS[member];
  return { ...(event as unknown as EventRecord), ...empty, payloadExpired: true } as unknown as E;
}

/**
 * Seals each event's payload under the data key its scope names (null: the
 * event keeps its payload in clear, as it has none). Answers the events
 * with their payload and the `sealed` note: projecting reads the payload,
 * appending stores `storedForm`.
 */
export async function sealEvents<E extends StoredToolEvent>(
  events: readonly E[],
  vault: PayloadVault,
  scopeOf: (event: E) => KeyScope,
  /** Sees each payload's text before it is sealed (and may refuse it, by throwing). */
  inspect?: (event: E, payload: Record<string, JsonValue>, plaintext: string) => void,
): Promise<E[]> {
  const requests = events.flatMap((event, index) => {
    const payload = payloadOf(event);
    if (payload === null) return [];
    const plaintext = JSON.stringify(payload);
    inspect?.(event, payload, plaintext);
    return [{ index, scope: scopeOf(event), plaintext }];
  });
  if (requests.length === 0) return [...events];
  const sealed = await vault.seal(requests);
  const out = [...events];
  requests.forEach(({ index }, i) => (out[index] = { ...out[index], sealed: sealed[i] }));
  return out;
}

/** Whether a sealed payload is gone by `nowMs`: its retention ended, or it was written without its bytes (a fork's copy of a payload already gone). */
export function sealGone(sealed: SealedPayload, nowMs?: number): boolean {
  return sealed.data === undefined || (nowMs !== undefined && sealed.expiresAt !== null && Date.parse(sealed.expiresAt) <= nowMs);
}

/**
 * Opens each sealed event: its payload members back in place (keeping the
 * `sealed` note), or, when it is gone (its retention ended by `nowMs`, its
 * data key destroyed), empty ones and `payloadExpired`. Events in clear are
 * answered as they are.
 */
export async function openEvents<E extends StoredToolEvent>(events: readonly E[], vault: PayloadVault, nowMs?: number): Promise<E[]> {
  const out = events.map((event) => (event.sealed !== undefined && sealGone(event.sealed, nowMs) ? withoutItsPayload(event) : event));
  const requests = out.flatMap((event, index) =>
    event.sealed === undefined || event.payloadExpired
      ? []
      : [{ index, tenantId: event.tenantId, conversationId: event.conversationId, sealed: event.sealed }],
  );
  if (requests.length === 0) return out;
  const opened = await vault.open(requests);
  requests.forEach(({ index }, i) => {
    const plaintext = opened[i];
    out[index] = plaintext === null ? withoutItsPayload(out[index]) : withPayload(out[index], JSON.parse(plaintext) as EventRecord);
  });
  return out;
}

/** An event as callers outside the service see it: no note of where its payload rests. */
export function withoutSealNote<E extends StoredToolEvent>(event: E): E {
  if (event.sealed === undefined) return event;
  const { sealed: _sealed, ...rest } = event;
  return rest as E;
}

/**
 * A fork's copies as the fork's own (docs/adr/033): each payload sealed
 * again under a data key of the fork, scoped by every conversation it came
 * through (erasing any of them destroys it) and ending when the source's
 * did (a fork never keeps a payload longer). A copy of a payload already
 * gone keeps only the note that it was sealed, without its bytes.
 */
export async function sealCopies<E extends StoredToolEvent>(copies: readonly E[], vault: PayloadVault, nowMs: number): Promise<E[]> {
  const out = copies.map((copy) =>
    copy.sealed !== undefined && (copy.payloadExpired || sealGone(copy.sealed, nowMs))
      ? ({ ...copy, sealed: { key: copy.sealed.key, expiresAt: copy.sealed.expiresAt } } as E)
      : copy,
  );
  const live = out.flatMap((copy, index) => (copy.sealed?.data === undefined ? [] : [{ copy, index }]));
  const sealed = await sealEvents(
    live.map((l) => l.copy),
    vault,
    (copy) => keyScopeOf(copy, copy.sealed!.expiresAt),
  );
  live.forEach(({ index }, i) => (out[index] = sealed[i]));
  return out;
}

/** The scope of an event's own payload, or of a fork's copy of another conversation's (its `via`). */
export function keyScopeOf(event: StoredToolEvent, expiresAt: string | null): KeyScope {
  return {
    tenantId: event.tenantId,
    conversationId: event.conversationId,
    expiresAt,
    via: event.forkedFrom?.via ?? [],
  };
}

export type { SealedPayload };
