import { AppError, ErrorCode } from '@toolhistory/errors';
import { loadConfig as loadConfigAsGiven } from './load-config';
import { withKeyring } from './encryption.fixture';

/** Encryption at rest is on by default: these specs are about other settings, so a keyring and key store are given. */
const loadConfig = (env: Record<string, string | undefined>, readFile?: (path: string) => Buffer) =>
  loadConfigAsGiven(...withKeyring(env, readFile));

describe('loadConfig', () => {
  it('uses the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.kafka).toMatchObject({
      brokers: ['127.0.0.1:9092'],
      topic: 'agent.tool-events',
      deadLetterTopic: 'agent.tool-events.dlq',
      partitions: 6,
    });
    expect(config.database).toMatchObject({
      url: 'postgres://postgres@127.0.0.1:5432/toolhistory',
      schema: 'public',
      statementTimeoutMs: 30_000,
      idleInTransactionTimeoutMs: 60_000,
    });
    expect(config.grpc.port).toBe(50051);
    expect(config.policyFile).toBeNull();
    expect(config.roles).toEqual(['recorder', 'grpc']);
    expect(config.maxEventBytes).toBe(1_048_576);
  });

  it('reads every variable it documents', () => {
    const config = loadConfig({
      KAFKA_BROKERS: 'k1:9092,k2:9093',
      KAFKA_GROUP_ID: 'g',
      TOOL_EVENTS_TOPIC: 'events.v1',
      TOOL_EVENTS_PARTITIONS: '12',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      DATABASE_SCHEMA: 'th',
      GRPC_PORT: '6000',
      POLICY_FILE: '/etc/toolhistory/policy.json',
      SERVICE_ROLES: 'grpc',
      MAX_EVENT_BYTES: '2048',
    });
    expect(config.kafka).toMatchObject({
      brokers: ['k1:9092', 'k2:9093'],
      groupId: 'g',
      topic: 'events.v1',
      deadLetterTopic: 'events.v1.dlq',
      partitions: 12,
    });
    expect(config.database).toMatchObject({ url: 'postgresql://u@db:5432/x', schema: 'th' });
    expect(config).toMatchObject({
      grpc: { port: 6000 },
      policyFile: '/etc/toolhistory/policy.json',
      roles: ['grpc'],
      maxEventBytes: 2048,
    });
  });

  it('lists every problem in one error', () => {
    let thrown: unknown;
    try {
      loadConfig({
        KAFKA_BROKERS: 'no-port',
        GRPC_PORT: '70000',
        DATABASE_URL: 'mysql://x',
        SERVICE_ROLES: 'recorder,web',
        TOOL_EVENTS_PARTITIONS: '0',
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const error = thrown as AppError;
    expect(error.code).toBe(ErrorCode.InvalidConfig);
    for (const name of ['KAFKA_BROKERS', 'GRPC_PORT', 'DATABASE_URL', 'SERVICE_ROLES', 'TOOL_EVENTS_PARTITIONS']) {
      expect(error.message).toContain(name);
    }
    expect(error.details.problems).toHaveLength(5);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ KAFKA_BROKERS: '', POLICY_FILE: '' }).kafka.brokers).toEqual(['127.0.0.1:9092']);
  });

  describe('event store', () => {
    it('is PostgreSQL unless told otherwise', () => {
      expect(loadConfig({}).eventStore).toEqual({ kind: 'postgres', url: null });
    });

    it('is EventStoreDB at EVENTSTORE_URL when EVENT_STORE says so', () => {
      expect(loadConfig({ EVENT_STORE: 'eventstoredb', EVENTSTORE_URL: 'esdb://127.0.0.1:2113?tls=false' }).eventStore).toEqual({
        kind: 'eventstoredb',
        url: 'esdb://127.0.0.1:2113?tls=false',
      });
      expect(loadConfig({ EVENT_STORE: 'eventstoredb', EVENTSTORE_URL: 'esdb+discover://cluster.example:2113' }).eventStore.url).toBe(
        'esdb+discover://cluster.example:2113',
      );
    });

    it('requires EVENTSTORE_URL for EventStoreDB, listed with the other problems', () => {
      for (const env of [{ EVENT_STORE: 'eventstoredb' }, { EVENT_STORE: 'eventstoredb', EVENTSTORE_URL: ' ' }]) {
        expect(() => loadConfig({ ...env, MAX_EVENT_BYTES: 'lots' })).toThrow(
          expect.objectContaining({
            code: ErrorCode.InvalidConfig,
            details: {
              problems: ['MAX_EVENT_BYTES must be a positive integer', 'EVENTSTORE_URL is required when EVENT_STORE is eventstoredb'],
            },
          }),
        );
      }
    });

    it('refuses an unknown store and a URL the client cannot read', () => {
      let thrown: AppError | undefined;
      try {
        loadConfig({ EVENT_STORE: 'mongodb', EVENTSTORE_URL: 'http://127.0.0.1:2113' });
      } catch (error) {
        thrown = error as AppError;
      }
      expect(thrown?.details.problems).toEqual([
        'EVENT_STORE must be one of: postgres, eventstoredb',
        'EVENTSTORE_URL must be a kurrentdb:// or kurrentdb+discover:// connection string (esdb:// is still read)',
      ]);
    });

    it('keeps a URL that is set while the store is PostgreSQL, unused', () => {
      expect(loadConfig({ EVENTSTORE_URL: 'esdb://127.0.0.1:2113' }).eventStore).toEqual({
        kind: 'postgres',
        url: 'esdb://127.0.0.1:2113',
      });
    });
  });
});
