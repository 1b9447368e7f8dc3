import { describeEventStoreContract } from '../../../test/contract/event-store.contract';
import { freshSchema } from '../../../test/support/fresh-schema';
import { PostgresAppendListener } from './postgres-append-listener';
import { PostgresEventStore } from './postgres-event-store';

describeEventStoreContract('PostgreSQL', async () => {
  const db = await freshSchema('evstore');
  const listener = new PostgresAppendListener({ url: db.url, schema: db.schema, poolSize: 1 });
  return {
    store: new PostgresEventStore(db.pool, listener),
    async close() {
      await listener.close();
      await db.drop();
    },
  };
});
