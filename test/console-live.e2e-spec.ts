import type { Producer } from 'kafkajs';
import type { Browser, Locator } from 'playwright-core';
import { consoleScreenshot, launchConsoleBrowser } from './support/console-browser';
import { freePort } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { uniqueName } from './support/test-environment';
import { issueToken, type SigningKey, signingKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from './support/test-tokens';
import { runCompleted, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

describe('the console follows a conversation live, in a real browser, through the real service', () => {
  let stack: RunningStack;
  let producer: Producer;
  let browser: Browser;
  let key: SigningKey;
  let httpPort: number;
  let readerToken: string;
  const tenantId = uniqueName('acme');
  const conversationId = uniqueName('conv-live');
  const run = { tenantId, conversationId, runId: 'r1', channel: 'support' };
  const recent = (s: number) => new Date(Date.now() - 60_000 + s * 1_000).toISOString();

  const api = (path: string, token?: string) =>
    fetch(`http://127.0.0.1:${httpPort}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    key = await signingKey('ES256');
    httpPort = await freePort();
    stack = await startRunningStack('console_live', {
      env: {
        GRPC_HOST: '127.0.0.1',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
    });
    // An auditor's token: the live view needs audit:read (or history:read) for the tenant, as the timeline does.
    readerToken = await issueToken(key, { tenants: [tenantId], scope: 'audit:read' }, { subject: 'auditor-bo' });
    producer = await connectedProducer(testKafka());
    browser = await launchConsoleBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await producer?.disconnect();
    await stack?.stop();
  });

  it('refuses the watch route without a token or with a token of another scope or tenant, with the JSON error of every route', async () => {
    const path = `/api/v1/tenants/${tenantId}/conversations/${conversationId}/watch`;
    expect((await api(path)).status).toBe(401);
    const subscriber = await issueToken(key, { tenants: [tenantId], scope: 'events:subscribe' });
    const refused = await api(path, subscriber);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'PERMISSION_DENIED', message: expect.stringContaining('history:read, audit:read') });
    expect((await api(`/api/v1/tenants/${uniqueName('globex')}/conversations/c/watch`, readerToken)).status).toBe(403);
  });

  it('shows a call pending, then its result, then its run completed, without a reload', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    let loads = 0;
    page.on('load', () => (loads += 1));

    await page.goto(`http://127.0.0.1:${httpPort}/console#/t/${tenantId}/c/${conversationId}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.locator('textarea[name=token]').fill(readerToken);
    await page.getByRole('button', { name: 'Use this token' }).click();
    await waitFor(
      async () => (await page.getByTestId('live-status').textContent({ timeout: 10_000 })) ?? '',
      (t) => t === 'live',
      { what: 'the page following the conversation live' },
    );
    await expectText(page.locator('main'), 'Nothing is recorded for this conversation.');
    const loadsBefore = loads;

    await publishEvents(producer, stack.topic, [
      toolCall(run, {
        roundIndex: 0,
        sequenceIndex: 0,
        toolCallId: 'c1',
        toolName: 'lookup_order',
        arguments: { order: 'A-1' },
        occurredAt: recent(0),
      }),
    ]);
    const call = page.getByTestId('timeline-call');
    await expectText(call.locator('.tag.status'), 'pending');
    await expectText(page.locator('.run-status'), 'running');
    await consoleScreenshot(page, 'timeline-live-pending');

    await publishEvents(producer, stack.topic, [
      toolResult(run, { roundIndex: 0, sequenceIndex: 0, toolCallId: 'c1', result: { status: 'shipped' }, occurredAt: recent(1) }),
    ]);
    await expectText(call.locator('.tag.status'), 'succeeded');
    await call.locator('summary').click();
    await expectText(call.locator('.call-body'), 'shipped');

    await publishEvents(producer, stack.topic, [runCompleted(run, { occurredAt: recent(2) })]);
    await expectText(page.locator('.run-status'), 'completed');
    await consoleScreenshot(page, 'timeline-live-result');

    expect(loads).toBe(loadsBefore);
    expect(await call.count()).toBe(1);
    // The sign-in's refused "who am I?" is the only error.
    expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
  });
});

async function expectText(locator: Locator, text: string): Promise<void> {
  await waitFor(
    async () => (await locator.first().textContent({ timeout: 10_000 })) ?? '',
    (t) => t.includes(text),
    { what: `"${text}" shown` },
  );
}
