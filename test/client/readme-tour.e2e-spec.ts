import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freshSchema, type FreshSchema } from '../support/fresh-schema';
import { toolHistoryClient } from '../support/grpc-client';
import { installPackedClient } from '../support/packed-client';
import { type ServiceProcess, spawnService, stopService } from '../support/service-harness';
import { uniqueName } from '../support/test-environment';
import { waitFor } from '../support/wait-for';

const ROOT = resolve(__dirname, '../..');

/** The README's tour as a newcomer copies it: the code block saved as tour.mjs. */
function tourScript(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /Save this as `tour\.mjs`[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no tour.mjs code block after "Save this as `tour.mjs`"');
  return block;
}

/**
 * The README's five-minute tour, run as written against the service where
 * the tour expects it (gRPC on 127.0.0.1:50051, the default topic, the
 * broker on 127.0.0.1:9092): it publishes a run and reads it back at once,
 * with no polling, relying on the consistency token alone.
 */
describe('the README tour, as written', () => {
  let db: FreshSchema;
  let service: ServiceProcess;
  let project: string;

  beforeAll(async () => {
    db = await freshSchema('tour');
    service = spawnService({
      topic: 'agent.tool-events',
      schema: db.schema,
      groupId: uniqueName('g'),
      env: { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: '50051' },
    });
    const health = toolHistoryClient(50051);
    try {
      await waitFor(
        () => health.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        {
          what: `the service SERVING on 127.0.0.1:50051, as the tour expects (output: ${service.output().slice(-300)})`,
          timeoutMs: 60_000,
        },
      );
    } finally {
      health.close();
    }
    project = mkdtempSync(join(tmpdir(), 'toolhistory-tour-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'toolhistory-tour', private: true }));
    installPackedClient(project);
    writeFileSync(join(project, 'tour.mjs'), tourScript());
  }, 300_000);

  afterAll(async () => {
    if (service) await stopService(service);
    await db?.drop();
  });

  it('prints the replayed run: the call with the e-mail redacted, then its result', () => {
    // The tour's install has kafkajs unpatched (ADR 037): its timer loop's warning is not the tour's output.
    const tour = spawnSync(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'tour.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      timeout: 60_000,
    });
    expect({ status: tour.status, stderr: tour.stderr }).toEqual({ status: 0, stderr: '' });
    const printed = JSON.parse(tour.stdout.slice(0, tour.stdout.lastIndexOf(']') + 1)) as Array<Record<string, unknown>>;
    expect(printed).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_order', arguments: JSON.stringify({ orderId: 'A-1', contact: '[REDACTED:email]' }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ status: 'shipped' }) },
    ]);
    expect(tour.stdout).toMatch(/http:\/\/127\.0\.0\.1:9464\/console#\/t\/acme\/c\/tour-\d+/);
  });
});
