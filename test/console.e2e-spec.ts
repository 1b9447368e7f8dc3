import type { Producer } from 'kafkajs';
import type { Browser, Page } from 'playwright-core';
import { consoleScreenshot, launchConsoleBrowser } from './support/console-browser';
import { freePort } from './support/grpc-client';
import { connectedProducer, publishEvents, testKafka } from './support/kafka-fixtures';
import { type RunningStack, startRunningStack } from './support/running-stack';
import { uniqueName } from './support/test-environment';
import { issueToken, type SigningKey, signingKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from './support/test-tokens';
import { runCompleted, runFailed, toolCall, toolResult } from './support/tool-event-factory';
import { waitFor } from './support/wait-for';

describe('audit console in a real browser, through the real service with recorded data', () => {
  let stack: RunningStack;
  let producer: Producer;
  let browser: Browser;
  let key: SigningKey;
  let httpPort: number;
  let operatorToken: string;
  let auditorToken: string;
  const tenantId = uniqueName('acme');
  const otherTenant = uniqueName('globex');
  const conversationId = uniqueName('conv');
  const minutesAgo = (m: number, s = 0) => new Date(Date.now() - m * 60_000 + s * 1_000).toISOString();
  const run = (runId: string) => ({ tenantId, conversationId, runId, channel: 'support' });
  const events = [
    // r1, an hour ago: its lookup is older than the tool's 30-minute freshness window.
    toolCall(run('r1'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c1',
      toolName: 'lookup_customer',
      arguments: { customer: 'Pat' },
      occurredAt: minutesAgo(60),
    }),
    toolResult(run('r1'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c1',
      result: { contact: 'pat@example.org', plan: 'gold' },
      occurredAt: minutesAgo(60, 1),
    }),
    runCompleted(run('r1'), { occurredAt: minutesAgo(60, 2) }),
    // r2, ten minutes ago: a search that failed, then a refund in a second round.
    toolCall(run('r2'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c2',
      toolName: 'search_orders',
      arguments: { query: 'blue kettle' },
      occurredAt: minutesAgo(10),
    }),
    toolResult(run('r2'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c2',
      result: 'order service timed out',
      isError: true,
      occurredAt: minutesAgo(10, 3),
    }),
    toolCall(run('r2'), {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'c3',
      toolName: 'issue_refund',
      arguments: { order: 'A-1001', amount: 42 },
      occurredAt: minutesAgo(9),
    }),
    toolResult(run('r2'), {
      roundIndex: 1,
      sequenceIndex: 0,
      toolCallId: 'c3',
      result: { refunded: true, reference: 'kettle refund R-77' },
      occurredAt: minutesAgo(9, 1),
    }),
    runCompleted(run('r2'), { occurredAt: minutesAgo(9, 2) }),
    // r3, now: a call with no result, and the run failed.
    toolCall(run('r3'), {
      roundIndex: 0,
      sequenceIndex: 0,
      toolCallId: 'c4',
      toolName: 'lookup_customer',
      arguments: { customer: 'Sam' },
      occurredAt: minutesAgo(1),
    }),
    runFailed(run('r3'), { occurredAt: minutesAgo(1, 5) }),
  ];

  const api = (path: string, token?: string) =>
    fetch(`http://127.0.0.1:${httpPort}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  /** A page that fails the test on any console error or uncaught exception (a CSP violation is one). */
  async function openPage(): Promise<{ page: Page; problems: string[] }> {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    return { page, problems };
  }

  /** The page's first question (who am I?) is refused until the token is given: that 401 is the only error allowed. */
  async function signIn(page: Page, problems: string[]): Promise<void> {
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.locator('textarea[name=token]').fill(operatorToken);
    await page.getByRole('button', { name: 'Use this token' }).click();
    await expectText(page.getByTestId('caller'), 'operator-ana');
    expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    problems.length = 0;
  }

  beforeAll(async () => {
    key = await signingKey('ES256');
    httpPort = await freePort();
    stack = await startRunningStack('console', {
      policy: { defaults: { freshnessSeconds: 3_600 }, tools: { lookup_customer: { freshnessSeconds: 1_800 } } },
      env: {
        GRPC_HOST: '127.0.0.1',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
    });
    operatorToken = await issueToken(key, { tenants: '*', scope: 'audit:read dead-letters:read' }, { subject: 'operator-ana' });
    auditorToken = await issueToken(key, { tenants: [tenantId], scope: 'audit:read' }, { subject: 'auditor-bo' });
    producer = await connectedProducer(testKafka());
    await publishEvents(producer, stack.topic, events);
    await producer.send({ topic: stack.topic, messages: [{ key: conversationId, value: '{"type": "ToolCallRequested", "tenantId": ' }] });
    // Recorded, searchable and dead-lettered before the browser looks.
    await waitFor(
      async () => (await api(`/api/v1/tenants/${tenantId}/search?q=kettle`, operatorToken)).json() as Promise<{ hits?: unknown[] }>,
      (r) => r.hits?.length === 2,
      { what: 'both kettle invocations searchable' },
    );
    await waitFor(
      async () => (await api('/api/v1/dead-letters', operatorToken)).json() as Promise<{ letters?: unknown[] }>,
      (r) => r.letters?.length === 1,
      { what: 'the poison message dead-lettered' },
    );
    browser = await launchConsoleBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await producer?.disconnect();
    await stack?.stop();
  });

  it('serves the page and its assets without a token, under a strict Content-Security-Policy, and nothing else without one', async () => {
    const page = await api('/console');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    const assets = [...html.matchAll(/\/console\/assets\/[^"]+/g)].map((m) => m[0]);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    for (const asset of assets) expect((await api(asset)).status).toBe(200);
    // A name that is not a built asset's is refused, even one that reaches a real file.
    expect((await api('/console/assets/..%2F..%2Fapps%2Ftoolhistory%2Fsrc%2Fmain.js')).status).toBe(404);
    expect((await api('/console/assets/missing.js')).status).toBe(404);

    expect((await api('/api/v1/me')).status).toBe(401);
    expect((await api(`/api/v1/tenants/${tenantId}/search?q=kettle`)).status).toBe(401);
  });

  it('keeps each caller to its tenants and dead letters to operators, and names a bad parameter', async () => {
    expect((await api(`/api/v1/tenants/${tenantId}/search?q=kettle`, auditorToken)).status).toBe(200);
    const other = await api(`/api/v1/tenants/${otherTenant}/conversations/${conversationId}/timeline`, auditorToken);
    expect(other.status).toBe(403);
    expect(await other.json()).toMatchObject({ code: 'PERMISSION_DENIED', message: expect.stringContaining(otherTenant) });
    expect((await api('/api/v1/dead-letters', auditorToken)).status).toBe(403);
    // Dead letters may be any tenant's: the scope alone is not enough without every tenant.
    const twoTenants = await issueToken(key, { tenants: [tenantId, otherTenant], scope: 'dead-letters:read' });
    const refused = await api('/api/v1/dead-letters', twoTenants);
    expect([refused.status, ((await refused.json()) as { message: string }).message]).toEqual([
      403,
      expect.stringContaining('needs a caller permitted every tenant'),
    ]);
    // Any verified caller may ask who it is, whatever its scopes.
    const me = await api('/api/v1/me', twoTenants);
    expect(await me.json()).toEqual({
      subject: 'test-worker',
      tenants: [tenantId, otherTenant].sort(),
      scopes: ['dead-letters:read'],
      authenticated: true,
    });
    const bad = await api(`/api/v1/tenants/${tenantId}/usage?bucket=week&from=yesterday`, auditorToken);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'bucket must be one of hour, day; from "yesterday" is not a time: write an ISO-8601 time',
    });
  });

  it('asks for a token, then shows the conversation as stored with what replay keeps and leaves out, and moves with the as-of slider', async () => {
    const { page, problems } = await openPage();
    await page.goto(`http://127.0.0.1:${httpPort}/console#/t/${tenantId}/c/${conversationId}`);
    await signIn(page, problems);

    const runs = page.getByTestId('timeline-run');
    await runs.first().waitFor();
    expect(await runs.count()).toBe(3);
    const calls = page.getByTestId('timeline-call');
    expect(await calls.count()).toBe(4);
    const verdicts = await calls.locator('.verdict').allTextContents();
    expect(verdicts).toEqual(['left out: result older than the freshness window', 'replayed', 'replayed', 'left out: its run failed']);
    await expectText(page.getByTestId('timeline-summary'), '2 call(s) replayed, 2 left out');
    // The redacted email, as stored, marked as a redaction.
    await calls.first().locator('summary').click();
    expect(await calls.first().locator('mark.redaction').allTextContents()).toEqual(['[REDACTED:email]']);
    await expect(page.locator('.run-status').allTextContents()).resolves.toEqual(['completed', 'completed', 'failed']);
    await consoleScreenshot(page, 'timeline');

    // As of fifty minutes ago, r2 and r3 were not recorded yet and r1's lookup was fresh.
    const fiftyMinutesAgo = Date.now() - 50 * 60_000;
    await page.locator('#as-of').fill(String(Math.round(fiftyMinutesAgo / 1_000) * 1_000));
    await page.waitForFunction("location.hash.includes('asOf=')");
    await expectText(page.getByTestId('timeline-summary'), '1 call(s) replayed');
    expect(await calls.locator('.verdict').allTextContents()).toEqual([
      'replayed',
      'not yet recorded at this moment',
      'not yet recorded at this moment',
      'not yet recorded at this moment',
    ]);
    await consoleScreenshot(page, 'timeline-as-of');
    expect(problems).toEqual([]);
  });

  it('searches the tenant, charts its usage per tool, and lists the dead letters', async () => {
    const { page, problems } = await openPage();
    await page.goto(`http://127.0.0.1:${httpPort}/console`);
    await signIn(page, problems);
    await page.locator('input[name=tenant]').fill(tenantId);
    await page.locator('input[name=tenant]').press('Enter');
    await page.locator('input[name=q]').fill('kettle');
    await page.getByRole('button', { name: 'Search' }).click();
    const hits = page.getByTestId('search-hit');
    await hits.first().waitFor();
    expect((await hits.locator('td:nth-child(2)').allTextContents()).sort()).toEqual(['issue_refund', 'search_orders']);
    expect((await hits.locator('mark').allTextContents()).map((t) => t.toLowerCase())).toContain('kettle');
    await consoleScreenshot(page, 'search');
    await hits.first().getByRole('link').click();
    await page.getByTestId('timeline-run').first().waitFor();

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByTestId('usage-chart').waitFor();
    const box = await page.getByTestId('usage-chart').boundingBox();
    expect(box?.height).toBeGreaterThan(100);
    const rows = await page.getByTestId('usage-table').locator('tbody tr').allTextContents();
    expect(rows.join('\n')).toMatch(/lookup_customer/);
    expect(rows.join('\n')).toMatch(/search_orders\s*1\s*1/);
    await consoleScreenshot(page, 'usage');

    await page.getByRole('link', { name: 'Dead letters' }).click();
    const letter = page.getByTestId('dead-letter');
    await letter.first().waitFor();
    expect(await letter.count()).toBe(1);
    await expectText(letter.locator('.error-code'), 'NOT_JSON');
    await consoleScreenshot(page, 'dead-letters');
    expect(problems).toEqual([]);
  });
});

async function expectText(locator: import('playwright-core').Locator, text: string): Promise<void> {
  await waitFor(
    async () => (await locator.textContent({ timeout: 10_000 })) ?? '',
    (t) => t.includes(text),
    { what: `"${text}" shown` },
  );
}
