import { checkSubscriptionRequest, EventStore, RecordedToolEvent, SubscriptionRequest } from '@toolhistory/domain';
import { AppError, ErrorCode } from '@toolhistory/errors';

/**
 * A tenant's recorded events from a position on, then live ones: what audit
 * and billing consumers follow. Validation here, ordering and resumability
 * in the EventStore port.
 */
export class SubscribeToolEvents {
  constructor(private readonly events: EventStore) {}

  /** Throws INVALID_ARGUMENT before anything is read; the iterable ends when `signal` aborts. */
  execute(request: SubscriptionRequest, signal: AbortSignal): AsyncIterable<RecordedToolEvent> {
    const checked = checkSubscriptionRequest(request);
    if (!checked.ok) throw new AppError(ErrorCode.InvalidArgument, checked.error);
    const { tenantId, after, types } = checked.value;
    return this.events.subscribe(after, { tenantId, types, signal });
  }
}
