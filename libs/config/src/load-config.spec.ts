import { AppError, ErrorCode } from '@toolhistory/errors';
import { loadConfig } from './load-config';

describe('loadConfig', () => {
  it('uses the documented defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.kafka).toMatchObject({
      brokers: ['127.0.0.1:9092'],
      topic: 'agent.tool-events',
      deadLetterTopic: 'agent.tool-events.dlq',
      partitions: 6,
    });
    expect(config.database).toMatchObject({ url: 'postgres://postgres@127.0.0.1:5432/toolhistory', schema: 'public' });
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
    expect(config.kafka).toMatchObject({ brokers: ['k1:9092', 'k2:9093'], groupId: 'g', topic: 'events.v1', deadLetterTopic: 'events.v1.dlq', partitions: 12 });
    expect(config.database).toMatchObject({ url: 'postgresql://u@db:5432/x', schema: 'th' });
    expect(config).toMatchObject({ grpc: { port: 6000 }, policyFile: '/etc/toolhistory/policy.json', roles: ['grpc'], maxEventBytes: 2048 });
  });

  it('lists every problem in one error', () => {
    let thrown: unknown;
    try {
      loadConfig({ KAFKA_BROKERS: 'no-port', GRPC_PORT: '70000', DATABASE_URL: 'mysql://x', SERVICE_ROLES: 'recorder,web', TOOL_EVENTS_PARTITIONS: '0' });
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
});
