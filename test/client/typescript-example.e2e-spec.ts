import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HOUR_LONG_FRESHNESS } from '../support/client-stack';
import { installPackedClient } from '../support/packed-client';
import { RunningStack, startRunningStack } from '../support/running-stack';

const ROOT = resolve(__dirname, '../..');
const installed = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

describe('examples/typescript-agent, installed from the packed client, against the real service', () => {
  let stack: RunningStack;
  let project: string;

  beforeAll(async () => {
    stack = await startRunningStack('tsexample', HOUR_LONG_FRESHNESS);
    project = mkdtempSync(join(tmpdir(), 'toolhistory-ts-example-'));
    cpSync(join(ROOT, 'examples/typescript-agent'), project, { recursive: true });
    // The framework at the version the adapter is tested with here.
    installPackedClient(project, [`ai@${installed('ai')}`, `zod@${installed('zod')}`]);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('runs three turns, each starting from the history the service replays, and exits 0', () => {
    // As its `npm start` runs it: the example installs kafkajs unpatched, which arms a timer with a negative
    // delay when no request is pending (a 1 ms loop, ADR 037), and Node.js 24 warns of it.
    const agent = spawnSync(process.execPath, ['--disable-warning=TimeoutNegativeWarning', 'agent.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        KAFKA_BROKERS: stack.brokers.join(','),
        TOOL_EVENTS_TOPIC: stack.topic,
        TOOLHISTORY_ADDRESS: stack.address,
      },
      timeout: 120_000,
    });
    expect({ status: agent.status, stderr: agent.stderr }).toEqual({ status: 0, stderr: '' });
    expect(agent.stdout).toContain('turn 1: replayed nothing');
    expect(agent.stdout).toMatch(/turn 3: replayed 2 earlier turn\(s\)/);
    expect(agent.stdout).toContain('get_weather({"city":"Paris"})');
    expect(agent.stdout).toContain('assistant: Paris was 18°C, as I looked up earlier.');
    expect(agent.stdout).toContain('ok: the last turn replayed all 3 tool calls of the earlier turns');
  });
});
