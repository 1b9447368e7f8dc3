import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { RunningStack, startRunningStack } from '../support/running-stack';
import { testCertificates } from '../support/test-certificates';
import { issueToken, signingKey, TEST_AUDIENCE, TEST_ISSUER, writeKeySet } from '../support/test-tokens';
import { uniqueName } from '../support/test-environment';

const ROOT = resolve(__dirname, '../..');
const PACKAGE = resolve(ROOT, 'clients/python');
/** pytest's report of the integration tests; .ci/run adds its counts to the run's total. */
const REPORT = resolve(ROOT, '.cache/pytest-integration.xml');

interface RunResult {
  code: number | null;
  output: string;
}

/** Runs a command without blocking the event loop, stdout and stderr interleaved as they come. */
function run(command: string, args: string[], env: Record<string, string>): Promise<RunResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: PACKAGE, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', fail);
    child.once('close', (code) => done({ code, output }));
  });
}

/** The counts of a JUnit XML report (pytest writes one <testsuite> in <testsuites>). */
function junitCounts(file: string): { tests: number; failures: number; errors: number; skipped: number } {
  const suite = /<testsuite\b[^>]*>/.exec(readFileSync(file, 'utf8'))?.[0] ?? '';
  const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? NaN);
  return { tests: count('tests'), failures: count('failures'), errors: count('errors'), skipped: count('skipped') };
}

/**
 * The Python package's integration tests (clients/python/tests/integration,
 * pytest) against the built service over TLS with JWT tenants, a fresh topic
 * and schema, and the real broker: each framework's adapter records a
 * two-turn conversation and replays it into the framework's next run. The
 * Python side runs in the pinned virtual environment of scripts/python-env.sh,
 * with the package installed as a user installs it.
 */
describe('the Python package (clients/python) against the running service', () => {
  let stack: RunningStack;
  let python: string;
  let env: Record<string, string>;
  const tenant = uniqueName('py-pkg');
  const certs = testCertificates();

  beforeAll(async () => {
    const key = await signingKey('ES256');
    stack = await startRunningStack('pypkg', {
      // web_search's results are compacted to the sources the run's answer cites (the PydanticAI adapter's citation test).
      policy: {
        defaults: { freshnessSeconds: 3600 },
        tools: {
          web_search: { citations: { items: '$.results[*]', number: '$.sourceNumber' } },
          // A call the host's cancellation cut off is replayed as interrupted (the LangChain adapter's cancellation test).
          transfer_funds: { sideEffects: true },
        },
        channels: {
          // A crashed run's rounds whose results reached a later model call replay (the adapters' crash-resume tests).
          'long-runs': { visibility: 'per_service_call' },
          // Keeps a completed turn's reasoning: the ADK session service's replay is then exactly what ADK's own
          // in-memory service gives the model (the default drops it once the turn answered).
          'reasoning-kept': { reasoning: { keep: 'always' } },
        },
      },
      env: {
        GRPC_TLS_CERT_FILE: certs.serverCert,
        GRPC_TLS_KEY_FILE: certs.serverKey,
        AUTH_JWKS_FILE: writeKeySet([key]),
        AUTH_ISSUER: TEST_ISSUER,
        AUTH_AUDIENCE: TEST_AUDIENCE,
      },
      healthClient: { tls: { ca: certs.read(certs.caCert) } },
    });
    const token = await issueToken(key, {
      tenants: [tenant],
      scope: 'history:read audit:read events:subscribe conversations:erase conversations:fork',
    });
    const otherTenantToken = await issueToken(key, { tenants: [`${tenant}-other`], scope: 'history:read audit:read' });
    // An agent's token: its tenant's history, no audit (search within one conversation only).
    const historyReaderToken = await issueToken(key, { tenants: [tenant], scope: 'history:read' });
    // Creates the environment when it is missing (CI made it before the tests), else only reinstalls the package.
    const { stdout } = await promisify(execFile)('bash', [resolve(ROOT, 'scripts/python-env.sh')], { cwd: ROOT, maxBuffer: 16 << 20 });
    python = stdout.trim().split('\n').pop()!;
    env = {
      TOOLHISTORY_ADDRESS: stack.address,
      TOOLHISTORY_CA_FILE: certs.caCert,
      TOOLHISTORY_TOKEN: token,
      TOOLHISTORY_OTHER_TENANT_TOKEN: otherTenantToken,
      TOOLHISTORY_HISTORY_READER_TOKEN: historyReaderToken,
      TOOLHISTORY_TENANT: tenant,
      KAFKA_BROKERS: stack.brokers.join(','),
      TOOL_EVENTS_TOPIC: stack.topic,
    };
  }, 600_000);

  afterAll(async () => {
    await stack?.stop();
  });

  it('passes its integration tests: the publisher, both gRPC clients and every adapter', async () => {
    mkdirSync(resolve(ROOT, '.cache'), { recursive: true });
    rmSync(REPORT, { force: true });
    // PYTEST_ARGS narrows the run (a file, -k ...) when working on one part; CI runs them all.
    const extra = (process.env.PYTEST_ARGS ?? '').split(' ').filter(Boolean);
    const pytest = await run(
      python,
      [
        '-m',
        'pytest',
        '-m',
        'integration',
        '-p',
        'no:cacheprovider',
        `--junitxml=${REPORT}`,
        ...(extra.length ? extra : ['tests/integration']),
      ],
      env,
    );
    // On a failure, the diff shows the end of pytest's output: what failed and why.
    const summary = pytest.code === 0 ? 'passed' : pytest.output.trim().split('\n').slice(-80).join('\n');
    expect({ code: pytest.code, summary }).toEqual({ code: 0, summary: 'passed' });
    expect(existsSync(REPORT)).toBe(true);
    const counts = junitCounts(REPORT);
    // A run that collected nothing, or skipped a test, hides what it should show.
    expect(counts).toEqual({ tests: expect.any(Number), failures: 0, errors: 0, skipped: 0 });
    expect(counts.tests).toBeGreaterThan(0);
  }, 900_000);
});
