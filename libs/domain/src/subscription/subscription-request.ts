import { TOOL_EVENT_TYPES, ToolEventType } from '@toolhistory/contract';
import { idProblem } from '@toolhistory/errors';
import type { GlobalPosition } from '../ports/event-store.port';

export interface SubscriptionRequest {
  tenantId: string;
  /** The last position the subscriber saw ("0" or empty: from the start). */
  fromPosition?: string;
  /** Event type names; empty: every type. */
  types?: readonly string[];
}

export interface Subscription {
  tenantId: string;
  after: GlobalPosition;
  types: ToolEventType[];
}

export type CheckedSubscription = { ok: true; value: Subscription } | { ok: false; error: string };

/** Positions are PostgreSQL bigints and EventStoreDB commit positions: both fit a signed 64-bit integer. */
const MAX_POSITION = (1n << 63n) - 1n;

/** Validates what a subscriber asked for; the error names the field and what is wrong. */
export function checkSubscriptionRequest(request: SubscriptionRequest): CheckedSubscription {
  if (!request.tenantId) return { ok: false, error: 'tenant_id is required' };
  const tenantProblem = idProblem('tenant_id', request.tenantId);
  if (tenantProblem) return { ok: false, error: tenantProblem };
  const from = request.fromPosition === undefined || request.fromPosition === '' ? '0' : request.fromPosition;
  if (!/^\d{1,20}$/.test(from) || BigInt(from) > MAX_POSITION) {
    return { ok: false, error: `from_position must be a whole number from 0 to ${MAX_POSITION}, not ${JSON.stringify(from)}` };
  }
  const unknown = (request.types ?? []).filter((t) => !(TOOL_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    return { ok: false, error: `types: ${unknown.map((t) => JSON.stringify(t)).join(', ')} not one of ${TOOL_EVENT_TYPES.join(', ')}` };
  }
  return {
    ok: true,
    value: { tenantId: request.tenantId, after: BigInt(from).toString(), types: [...new Set(request.types ?? [])] as ToolEventType[] },
  };
}
