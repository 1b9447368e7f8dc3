import fc from 'fast-check';
import { NO_STREAM, START } from '@kurrent/kurrentdb-client';
import { comparePositions } from '@toolhistory/domain';
import { ErrorCode } from '@toolhistory/errors';
import {
  expectationHolds,
  expectedRevisionFor,
  isAfter,
  parseGlobalPosition,
  parseStreamName,
  readPositionAfter,
  revisionAt,
  STREAM_PREFIX,
  streamNameOf,
  streamPositionOf,
  tenantStreamPrefix,
  toGlobalPosition,
} from './eventstoredb-mapping';

const id = fc.string({ minLength: 1, maxLength: 40, unit: 'binary' });

describe('stream names', () => {
  it('encodes tenant and conversation under the toolhistory/ prefix', () => {
    expect(streamNameOf({ tenantId: 'acme', conversationId: 'conv-42' })).toBe('toolhistory/acme/conv-42');
    expect(streamNameOf({ tenantId: 'a/b', conversationId: 'c d/%' })).toBe('toolhistory/a%2Fb/c%20d%2F%25');
    expect(tenantStreamPrefix('acme')).toBe('toolhistory/acme/');
    expect(tenantStreamPrefix()).toBe(STREAM_PREFIX);
  });

  it("gives a tenant a prefix that no other tenant's stream name starts with", () => {
    // The classic trap: tenant "a" must not see "a/b", nor "a" the tenant "ab".
    expect(streamNameOf({ tenantId: 'a/b', conversationId: 'x' }).startsWith(tenantStreamPrefix('a'))).toBe(false);
    expect(streamNameOf({ tenantId: 'ab', conversationId: 'x' }).startsWith(tenantStreamPrefix('a'))).toBe(false);
    fc.assert(
      fc.property(id, id, id, (tenant, other, conversation) => {
        const name = streamNameOf({ tenantId: tenant, conversationId: conversation });
        expect(name.startsWith(tenantStreamPrefix(tenant))).toBe(true);
        expect(name.startsWith(STREAM_PREFIX)).toBe(true);
        if (other !== tenant) expect(name.startsWith(tenantStreamPrefix(other))).toBe(false);
      }),
    );
  });

  it('never makes a name that looks like a system stream', () => {
    fc.assert(fc.property(id, id, (tenantId, conversationId) => !streamNameOf({ tenantId, conversationId }).includes('$')));
  });

  it('reads back the conversation of any name it made', () => {
    fc.assert(
      fc.property(id, id, (tenantId, conversationId) => {
        expect(parseStreamName(streamNameOf({ tenantId, conversationId }))).toEqual({ tenantId, conversationId });
      }),
    );
  });

  it('refuses an id no stream name can hold', () => {
    expect(() => streamNameOf({ tenantId: 'acme', conversationId: 'broken-\ud800' })).toThrow(
      expect.objectContaining({ code: ErrorCode.UnstorableEvent, retriable: false }),
    );
  });

  it('refuses names it did not make', () => {
    for (const name of [
      '$all',
      '$$toolhistory/a/b',
      'other/a/b',
      'toolhistory/a',
      'toolhistory/a/b/c',
      'toolhistory/%E0%A4/b',
      'toolhistory/%61/b',
    ]) {
      expect(parseStreamName(name)).toBeNull();
    }
  });
});

describe('global positions', () => {
  it('is the commit position as a decimal string, exact beyond 2^53', () => {
    expect(toGlobalPosition({ commit: 1_234n, prepare: 1_234n })).toBe('1234');
    expect(toGlobalPosition({ commit: 2n ** 53n + 1n, prepare: 2n ** 53n + 1n })).toBe('9007199254740993');
  });

  it('keeps the $all order: comparePositions agrees with the commit positions', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }), (a, b) => {
        const order = comparePositions(toGlobalPosition({ commit: a, prepare: a }), toGlobalPosition({ commit: b, prepare: b }));
        expect(order).toBe(a < b ? -1 : a > b ? 1 : 0);
      }),
    );
  });

  it('resumes after a position: starts at it and keeps only what is after it', () => {
    expect(readPositionAfter(0n)).toBe(START);
    expect(readPositionAfter(9_007_199_254_740_993n)).toEqual({ commit: 9_007_199_254_740_993n, prepare: 9_007_199_254_740_993n });
    const at = { commit: 500n, prepare: 500n };
    expect(isAfter(at, 499n)).toBe(true);
    expect(isAfter(at, 500n)).toBe(false);
    expect(isAfter(at, 501n)).toBe(false);
  });

  it('round-trips a position through its string', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
        (p) => parseGlobalPosition(toGlobalPosition({ commit: p, prepare: p })) === p,
      ),
    );
  });

  it('refuses anything but a decimal int64', () => {
    for (const bad of ['', '-1', '1.5', '1e3', 'abc', ' 1', '9223372036854775808', '99999999999999999999']) {
      expect(() => parseGlobalPosition(bad)).toThrow(expect.objectContaining({ code: ErrorCode.InvalidArgument }));
    }
    expect(parseGlobalPosition('9223372036854775807')).toBe(2n ** 63n - 1n);
  });
});

describe('stream positions and expected revisions', () => {
  it('maps 1-based stream positions to 0-based revisions', () => {
    expect(revisionAt(0)).toBe(NO_STREAM);
    expect(revisionAt(1)).toBe(0n);
    expect(revisionAt(3)).toBe(2n);
    expect(streamPositionOf(0n)).toBe(1);
    expect(streamPositionOf(2n)).toBe(3);
  });

  it('checks the writer’s expectation against the stream read', () => {
    expect(expectationHolds('any', 0)).toBe(true);
    expect(expectationHolds('any', 7)).toBe(true);
    expect(expectationHolds('no_stream', 0)).toBe(true);
    expect(expectationHolds('no_stream', 1)).toBe(false);
    expect(expectationHolds(2, 2)).toBe(true);
    expect(expectationHolds(2, 3)).toBe(false);
    expect(expectationHolds(0, 0)).toBe(true);
  });

  it("sends no_stream as NO_STREAM, n as revision n - 1, and 'any' as the revision read", () => {
    expect(expectedRevisionFor('no_stream', 0)).toBe(NO_STREAM);
    expect(expectedRevisionFor(3, 3)).toBe(2n);
    expect(expectedRevisionFor(0, 0)).toBe(NO_STREAM);
    expect(expectedRevisionFor('any', 0)).toBe(NO_STREAM);
    expect(expectedRevisionFor('any', 5)).toBe(4n);
  });
});
