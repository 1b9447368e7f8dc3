import { loadSync } from '@grpc/proto-loader';
import { findProjectFile } from '../find-project-file';
import { TOOL_HISTORY_PROTO } from './grpc-server-options';
import { MemoizedResponse, writeMemoizedResponses } from './memoized-response';

const LOADER = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true };
const load = () => loadSync(findProjectFile(TOOL_HISTORY_PROTO), LOADER);
type Method = { responseSerialize: (value: unknown) => Buffer; responseDeserialize: (bytes: Buffer) => unknown };
const methodOf = (pkg: ReturnType<typeof load>, name: string) =>
  (pkg['toolhistory.v1.ToolHistory'] as unknown as Record<string, Method>)[name];

const message = {
  turns: [{ run_id: 'r1', assistant_message_id: 'm1', status: 'RUN_STATUS_COMPLETED', rounds: [], messages_json: '[]' }],
  omitted: [{ run_id: 'r2', round_index: 0, sequence_index: 1, tool_call_id: 'c', tool_name: 't', reason: 'OMISSION_REASON_STALE' }],
  history_tokens: 42,
};

describe('writeMemoizedResponses', () => {
  it('writes a memoized response as the bytes plain encoding gives, encoding it once however often it is sent', () => {
    const pkg = load();
    const plain = methodOf(load(), 'GetReplayHistory').responseSerialize(message);
    const encode = jest.fn(methodOf(pkg, 'GetReplayHistory').responseSerialize);
    methodOf(pkg, 'GetReplayHistory').responseSerialize = encode;
    writeMemoizedResponses(pkg, 'toolhistory.v1.ToolHistory', ['GetReplayHistory']);
    const serialize = methodOf(pkg, 'GetReplayHistory').responseSerialize;

    const memoized = new MemoizedResponse(message);
    const first = serialize(memoized);
    const second = serialize(memoized);
    expect(first.equals(plain)).toBe(true);
    expect(second).toBe(first);
    expect(encode).toHaveBeenCalledTimes(1);
    // Empty repeated fields are not on the wire, so they do not come back.
    const { rounds: _empty, ...turn } = message.turns[0];
    expect(methodOf(pkg, 'GetReplayHistory').responseDeserialize(first)).toEqual({ ...message, turns: [turn] });
    // Anything else is encoded as before, every time.
    expect(serialize(message).equals(plain)).toBe(true);
    expect(encode).toHaveBeenCalledTimes(2);
  });

  it('refuses a method the package does not have, so a renamed RPC cannot go unnoticed', () => {
    expect(() => writeMemoizedResponses(load(), 'toolhistory.v1.ToolHistory', ['GetReplayHistorie'])).toThrow(
      'toolhistory.v1.ToolHistory/GetReplayHistorie is not in the package definition',
    );
  });
});
