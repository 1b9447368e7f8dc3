import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertServiceBuilt } from './built-service';
import { freshSchema, FreshSchema } from './fresh-schema';
import { ClientOptions, freePort, toolHistoryClient } from './grpc-client';
import { freshTopic, testKafka } from './kafka-fixtures';
import { ServiceProcess, spawnService, stopService } from './service-harness';
import { TEST_KAFKA_BROKERS, uniqueName } from './test-environment';
import { waitFor } from './wait-for';

/** The built service recording a fresh topic into a fresh schema and serving gRPC, as an agent worker meets it. */
export interface RunningStack {
  brokers: string[];
  topic: string;
  deadLetterTopic: string;
  /** The recorder's consumer group: a second process on the same group reads what this one records. */
  groupId: string;
  /** host:port of the gRPC server. */
  address: string;
  /** The service process running now (restart() replaces it). */
  readonly service: ServiceProcess;
  db: FreshSchema;
  /** SIGTERM to the service, then the same service again on the same port, topic, group and schema, once it is SERVING. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface StackOptions {
  policy?: object;
  env?: Record<string, string>;
  /** How the health probe reaches a server that serves TLS. */
  healthClient?: ClientOptions;
  /** Default: a fresh one. */
  groupId?: string;
}

export async function startRunningStack(prefix: string, options: StackOptions = {}): Promise<RunningStack> {
  assertServiceBuilt();
  const kafka = testKafka();
  const db = await freshSchema(prefix);
  const { topic, deadLetterTopic } = await freshTopic(kafka, 3);
  const port = await freePort();
  const env: Record<string, string> = { SERVICE_ROLES: 'recorder,grpc', GRPC_PORT: String(port), ...options.env };
  if (options.policy) {
    const policyFile = join(mkdtempSync(join(tmpdir(), 'toolhistory-policy-')), 'policy.json');
    writeFileSync(policyFile, JSON.stringify(options.policy));
    env.POLICY_FILE = policyFile;
  }
  const settings = { topic, schema: db.schema, groupId: options.groupId ?? uniqueName('g'), env };
  const started = async (): Promise<ServiceProcess> => {
    const service = spawnService(settings);
    const health = toolHistoryClient(port, options.healthClient);
    try {
      await waitFor(
        () => health.healthCheck().catch(() => 'DOWN'),
        (s) => s === 'SERVING',
        { what: `health SERVING (service output: ${service.output().slice(-500)})`, timeoutMs: 60_000 },
      );
    } finally {
      health.close();
    }
    return service;
  };
  let service = await started();
  return {
    brokers: TEST_KAFKA_BROKERS,
    topic,
    deadLetterTopic,
    groupId: settings.groupId,
    address: `127.0.0.1:${port}`,
    get service() {
      return service;
    },
    db,
    async restart() {
      await stopService(service);
      service = await started();
    },
    async stop() {
      await stopService(service);
      await db.drop();
    },
  };
}
