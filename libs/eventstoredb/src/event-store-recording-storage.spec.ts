import { describeRecordingStorageContract } from '../../../test/contract/recording-storage.contract';
import { InMemoryConsumerOffsets } from '../../../test/support/in-memory-consumer-offsets';
import { EventStoreDbEventStore } from './eventstoredb-event-store';
import { EventStoreRecordingStorage } from './event-store-recording-storage';
import { InMemoryEventStoreDbClient } from './in-memory-eventstoredb-client.fixture';

/*
 * Recording into EventStoreDB through the EventStore port, against the
 * in-memory model of the client (offsets in memory too: this library does
 * not know the read model's database). The real server is exercised by
 * event-store-recording-storage.int-spec.ts.
 */
describeRecordingStorageContract('EventStoreDB adapter on an in-memory model of its client (no server)', async () => {
  const events = new EventStoreDbEventStore(new InMemoryEventStoreDbClient().asClient());
  return {
    storage: new EventStoreRecordingStorage(events, new InMemoryConsumerOffsets()),
    events,
    erase: async (stream) => void (await events.deleteStream(stream)),
    close: () => Promise.resolve(),
  };
});
