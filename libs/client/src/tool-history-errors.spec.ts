import { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ToolHistoryPublishError } from './recording/ordered-publish-queue';
import { isRetriable } from './retriable-failures';
import { InvalidToolEventError, PersistHookError, PublishError, ToolHistoryClientError, ToolHistoryError } from './tool-history-errors';

// kafkajs builds a protocol error from its table of Kafka's error codes (`type`, `code`, `retriable`).
const protocolError = (type: string) =>
  new KafkaJSProtocolError(Object.assign(new Error(`broker says ${type}`), { type, code: 0, retriable: false }));
const gaveUp = (last: Error) => new KafkaJSNumberOfRetriesExceeded(last, { retryCount: 5, retryTime: 5_000 });

describe('errors of the package', () => {
  it('all share one base, each with whether a retry may pass', () => {
    const errors = [
      new InvalidToolEventError(['roundIndex must be >= 0']),
      new PersistHookError('get_order', 'result', new Error('boom')),
      new PublishError('NOT_ENOUGH_REPLICAS', 'short of replicas'),
      new ToolHistoryError(GrpcStatus.UNAVAILABLE, 'down', 'GetReplayHistory'),
      new ToolHistoryPublishError([{ event: 'RunCompleted', error: new PublishError('REQUEST_TIMED_OUT', 'slow') }], []),
    ];
    for (const error of errors) expect(error).toBeInstanceOf(ToolHistoryClientError);
    expect(errors.map((error) => [error.name, error.retriable])).toEqual([
      ['InvalidToolEventError', false],
      ['PersistHookError', false],
      ['PublishError', true],
      ['ToolHistoryError', true],
      ['ToolHistoryPublishError', true],
    ]);
  });

  it.each([
    [
      'a broker that cannot be reached',
      gaveUp(new KafkaJSConnectionError('Connection error: ECONNREFUSED')),
      'KafkaJSConnectionError',
      true,
    ],
    ['short of in-sync replicas', gaveUp(protocolError('NOT_ENOUGH_REPLICAS')), 'NOT_ENOUGH_REPLICAS', true],
    ['a message the broker refuses as too large', protocolError('MESSAGE_TOO_LARGE'), 'MESSAGE_TOO_LARGE', false],
    ['a topic the producer may not write', gaveUp(protocolError('TOPIC_AUTHORIZATION_FAILED')), 'TOPIC_AUTHORIZATION_FAILED', false],
    ['a failure kafkajs says nothing more of', new KafkaJSNonRetriableError('closed'), 'KafkaJSNonRetriableError', false],
    ['no error at all', undefined, 'UNKNOWN', false],
  ])('a publication that failed on %s: code from the last try, retriable from the table', (_what, thrown, code, retriable) => {
    const error = PublishError.fromKafkaError(thrown);
    expect([error.code, error.retriable]).toEqual([code, retriable]);
    expect(error.cause).toBe(thrown);
  });

  it.each([
    ['UNAVAILABLE', true],
    ['DEADLINE_EXCEEDED', true],
    ['RESOURCE_EXHAUSTED', true],
    ['ABORTED', true],
    ['INVALID_ARGUMENT', false],
    ['PERMISSION_DENIED', false],
    ['NOT_FOUND', false],
  ])('a call that failed %s: retriable %s', (status, retriable) => {
    expect(isRetriable(status)).toBe(retriable);
    expect(new ToolHistoryError(GrpcStatus[status as keyof typeof GrpcStatus], 'x', 'M').retriable).toBe(retriable);
  });
});
