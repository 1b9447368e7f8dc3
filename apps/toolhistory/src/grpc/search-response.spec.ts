import * as protoLoader from '@grpc/proto-loader';
import { NOT_YET_APPROVED_OR_RESUMED, type SearchHit } from '@toolhistory/domain';
import { findProjectFile } from '../find-project-file';
import { TOOL_HISTORY_PROTO } from './grpc-server-options';
import { searchMatchOf, timestampToMillis, toSearchResponse } from './proto-mapping';

describe('SearchToolHistory on the wire', () => {
  const definition = protoLoader.loadSync(findProjectFile(TOOL_HISTORY_PROTO), {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const method = (definition['toolhistory.v1.ToolHistory'] as protoLoader.ServiceDefinition).SearchToolHistory;

  const hit: SearchHit = {
    invocation: {
      tenantId: 'acme',
      conversationId: 'c-1',
      runId: 'r-1',
      pairKey: 'id:call_1',
      roundIndex: 0,
      sequenceIndex: 2,
      toolCallId: 'call_1',
      toolName: 'read_file',
      arguments: { path: 'src/app.ts' },
      result: 'export const app = createApp();',
      isError: false,
      requestedAt: '2026-11-20T10:00:00.123456+00:00',
      completedAt: '2026-11-20T10:00:01.5+00:00',
      persist: 'full',
      producerRedacted: false,
      argumentRedactions: {},
      resultRedactions: { email: 1 },
      at: '2026-11-20T10:00:00.123456+00:00',
      durationMs: 1_377,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      argumentsBytes: 22,
      resultBytes: 3_145_728,
      ...NOT_YET_APPROVED_OR_RESUMED,
    },
    score: 0.4375,
    snippet: 'read_file {"path": "**src**/**app.ts**"} export const app',
    matchedIn: ['arguments', 'result'],
  };

  it('is a unary rpc whose mapped answer survives the published proto unchanged', () => {
    expect(method).toMatchObject({ requestStream: false, responseStream: false });
    const decoded = method.responseDeserialize(method.responseSerialize(toSearchResponse([hit]))) as { hits: unknown[] };
    expect(decoded.hits).toHaveLength(1);
    expect(decoded.hits[0]).toMatchObject({
      score: 0.4375,
      snippet: hit.snippet,
      matched_in: ['SEARCH_HIT_FIELD_ARGUMENTS', 'SEARCH_HIT_FIELD_RESULT'],
      invocation: {
        tenant_id: 'acme',
        conversation_id: 'c-1',
        tool_name: 'read_file',
        arguments_json: '{"path":"src/app.ts"}',
        result: 'export const app = createApp();',
        status: 'INVOCATION_STATUS_SUCCEEDED',
        persist: 'PERSIST_MODE_FULL',
        duration_ms: '1377',
        result_redactions: { email: 1 },
        requested_at: { nanos: 123_456_000 },
      },
    });
    expect(method.responseDeserialize(method.responseSerialize(toSearchResponse([])))).toEqual({ hits: [] });
  });

  it('carries the request fields the controller reads', () => {
    const request = {
      tenant_id: 'acme',
      query: '"git status" -main',
      conversation_id: 'c-1',
      limit: 5,
      from: { seconds: '1795255200', nanos: 0 },
      to: { seconds: '1795258800', nanos: 0 },
      match: 'SEARCH_MATCH_SUBSTRING',
    };
    const decoded = method.requestDeserialize(method.requestSerialize(request)) as typeof request;
    expect(searchMatchOf(decoded.match)).toBe('substring');
    expect(decoded).toMatchObject({ ...request, from: { seconds: '1795255200' }, to: { seconds: '1795258800' } });
    expect(timestampToMillis(decoded.from)).toBe(1_795_255_200_000);
  });

  it('reads the match mode: unset or unspecified is words, an unknown one is refused', () => {
    expect(searchMatchOf(undefined)).toBe('words');
    expect(searchMatchOf(0)).toBe('words');
    expect(searchMatchOf('SEARCH_MATCH_UNSPECIFIED')).toBe('words');
    expect(searchMatchOf('SEARCH_MATCH_WORDS')).toBe('words');
    expect(searchMatchOf('SEARCH_MATCH_SUBSTRING')).toBe('substring');
    expect(() => searchMatchOf('SEARCH_MATCH_REGEX')).toThrow(/match: "SEARCH_MATCH_REGEX" is not one of/);
  });
});
