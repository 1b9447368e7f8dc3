import { describeEventStoreContract } from '../../../test/contract/event-store.contract';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

/*
 * The shared EventStore contract against a real EventStoreDB / KurrentDB,
 * e.g. EVENTSTORE_URL='esdb://127.0.0.1:2113?tls=false' (see the README).
 * Every test works in tenants of its own, so a long-lived server is fine.
 * Without a server the suite is reported as skipped, never as passed.
 */
const url = process.env.EVENTSTORE_URL;

if (url) {
  describeEventStoreContract('EventStoreDB', async () => {
    const store = EventStoreDbEventStore.connect(url);
    return { store, close: () => store.close() };
  });
} else {
  // No EventStoreDB server runs on the machines this project builds on: the suite is reported as
  // skipped (not passed) so that it shows; README "EventStoreDB / KurrentDB" says how to run it.
  describe.skip('EventStore contract: EventStoreDB (set EVENTSTORE_URL to run)', () => {
    it('runs the shared EventStore contract suite against an EventStoreDB server', () => undefined);
  });
}
