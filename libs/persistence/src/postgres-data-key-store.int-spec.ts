import { describeDataKeyStoreContract } from '../../../test/contract/data-key-store.contract';
import { TEST_DATABASE_URL, uniqueName } from '../../../test/support/test-environment';
import { dropSchema } from './database';
import { PostgresDataKeyStore } from './postgres-data-key-store';

/** The key store's own database beside the test database: apart from the payloads, as in production. */
const KEYSTORE_URL = TEST_DATABASE_URL.replace(/\/[^/?]+(\?|$)/, '/toolhistory_test_keys$1');

describeDataKeyStoreContract('PostgreSQL (KEYSTORE_URL=postgres://)', async () => {
  const schema = uniqueName('keys').toLowerCase();
  const store = await PostgresDataKeyStore.open({ url: KEYSTORE_URL, schema, poolSize: 4 }, { migrate: true });
  return {
    store,
    async close() {
      await store.close();
      await dropSchema(KEYSTORE_URL, schema);
    },
  };
});
