import { describeRecordingStorageContract } from '../../../test/contract/recording-storage.contract';
import { InMemoryConsumerOffsets } from '../../../test/support/in-memory-consumer-offsets';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { EventStoreRecordingStorage } from './event-store-recording-storage';

/*
 * The shared RecordingStorage contract against a real EventStoreDB /
 * KurrentDB, e.g. EVENTSTORE_URL='esdb://127.0.0.1:2113?tls=false' (see the
 * README). Without a server the suite is reported as skipped, never as passed.
 */
const url = process.env.EVENTSTORE_URL;

if (url) {
  describeRecordingStorageContract('EventStoreDB', async () => {
    const events = EventStoreDbEventStore.connect(url);
    return {
      storage: new EventStoreRecordingStorage(events, new InMemoryConsumerOffsets()),
      events,
      erase: async (stream) => void (await events.deleteStream(stream)),
      close: () => events.close(),
    };
  });
} else {
  describe.skip('RecordingStorage contract: EventStoreDB (set EVENTSTORE_URL to run)', () => {
    it('runs the shared RecordingStorage contract suite against an EventStoreDB server', () => undefined);
  });
}
