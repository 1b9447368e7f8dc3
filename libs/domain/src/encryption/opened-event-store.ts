import type { StoredToolEvent } from '@toolhistory/contract';
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  GlobalPosition,
  ReadAllOptions,
  RecordedToolEvent,
  StreamRef,
  SubscribeOptions,
} from '../ports/event-store.port';
import type { PayloadVault } from '../ports/payload-vault.port';
import { openEvents } from './sealed-payloads';

/**
 * An event store whose readers get payloads in clear (docs/adr/033): every
 * event read, by stream, in global order or by subscription, has its sealed
 * payload opened, or is marked `payloadExpired` once its retention ended or
 * its key is gone. Appends pass through: the recorder seals before it
 * appends. Readers that need only ids use the store as it is.
 */
export class OpenedEventStore implements EventStore {
  constructor(
    private readonly store: EventStore,
    private readonly vault: PayloadVault,
    private readonly now: () => number,
  ) {}

  append(stream: StreamRef, events: readonly StoredToolEvent[], options?: AppendOptions): Promise<AppendResult> {
    return this.store.append(stream, events, options);
  }

  async readStream(stream: StreamRef): Promise<RecordedToolEvent[]> {
    return this.opened(await this.store.readStream(stream));
  }

  async readAll(after: GlobalPosition, options: ReadAllOptions): Promise<RecordedToolEvent[]> {
    return this.opened(await this.store.readAll(after, options));
  }

  async *subscribe(after: GlobalPosition, options?: SubscribeOptions): AsyncIterable<RecordedToolEvent> {
    for await (const recorded of this.store.subscribe(after, options)) {
      const [opened] = await this.opened([recorded]);
      yield opened;
    }
  }

  deleteStream(stream: StreamRef): Promise<number> {
    return this.store.deleteStream(stream);
  }

  private async opened(recorded: RecordedToolEvent[]): Promise<RecordedToolEvent[]> {
    if (!recorded.some((r) => r.event.sealed !== undefined)) return recorded;
    const events = await openEvents(
      recorded.map((r) => r.event),
      this.vault,
      this.now(),
    );
    return recorded.map((r, i) => ({ ...r, event: events[i] }));
  }
}
