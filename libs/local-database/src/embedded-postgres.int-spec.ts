import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { type EmbeddedPostgres, freeLoopbackPort, startEmbeddedPostgres } from './embedded-postgres';
import { probeLocalPostgres } from './probe-local-postgres';
import { answersOnLoopback } from '../../../test/support/listening-sockets';

describe('the embedded PostgreSQL, on a real cluster from the npm package', () => {
  let folder: string;
  let cluster: EmbeddedPostgres | undefined;

  beforeAll(() => {
    folder = mkdtempSync(join(tmpdir(), 'toolhistory-embedded-'));
    // As root the cluster runs as the user postgres, which must reach its folder.
    chmodSync(folder, 0o755);
  });

  afterAll(async () => {
    await cluster?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('starts on a free loopback port, takes the password from its file and no login without it', async () => {
    cluster = await startEmbeddedPostgres(join(folder, 'cluster'));
    const client = new Client({ connectionString: cluster.urlFor('postgres') });
    await client.connect();
    const { rows } = await client.query<{ version: string; listen: string }>(
      "SELECT current_setting('server_version') AS version, current_setting('listen_addresses') AS listen",
    );
    await client.end();
    expect(rows[0]).toEqual({ version: expect.stringMatching(/^16\./), listen: '127.0.0.1' });
    expect(cluster.urlFor('toolhistory', { withPassword: false })).toBe(`postgres://postgres@127.0.0.1:${cluster.port}/toolhistory`);
    expect(await probeLocalPostgres(cluster.port)).toEqual({ answers: false, why: 'it asks for a password' });
  });

  it('refuses a second user of the same cluster folder while the first runs, naming why', async () => {
    await expect(startEmbeddedPostgres(join(folder, 'cluster'))).rejects.toThrow(
      /another process of this checkout \(a test run, or start:local\) uses the embedded PostgreSQL in .*cluster\/data \(postgres pid \d+\)/,
    );
    // The first one is unharmed.
    const client = new Client({ connectionString: cluster!.urlFor('postgres') });
    await client.connect();
    await client.end();
  });

  it('stops when asked, and starts again on the data it kept', async () => {
    const first = cluster!;
    const setup = new Client({ connectionString: first.urlFor('postgres') });
    await setup.connect();
    await setup.query('CREATE DATABASE kept');
    await setup.end();
    await first.stop();
    expect(await answersOnLoopback(first.port)).toBe(false);

    cluster = await startEmbeddedPostgres(join(folder, 'cluster'));
    const again = new Client({ connectionString: cluster.urlFor('kept') });
    await again.connect();
    await again.end();
  });

  it('says that nothing answers on a port where nothing listens', async () => {
    expect(await probeLocalPostgres(await freeLoopbackPort())).toEqual({ answers: false, why: 'connection refused' });
  });
});
