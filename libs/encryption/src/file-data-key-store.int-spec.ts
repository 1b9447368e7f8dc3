import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDataKeyStoreContract } from '../../../test/contract/data-key-store.contract';
import { FileDataKeyStore } from './file-data-key-store';

describeDataKeyStoreContract('a directory (file://)', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'toolhistory-keystore-'));
  return {
    store: new FileDataKeyStore(directory),
    async close() {
      rmSync(directory, { recursive: true, force: true });
    },
  };
});
