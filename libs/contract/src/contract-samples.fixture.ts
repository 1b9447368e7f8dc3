/**
 * Samples shared by the contract tests: each valid sample must pass both
 * the classes and the JSON Schema; each invalid one must fail both.
 */
const envelope = {
  eventId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  schemaVersion: 1,
  tenantId: 'acme',
  conversationId: 'conv-42',
  channel: 'support',
  runId: 'run-7',
  occurredAt: '2026-11-02T10:15:30.123Z',
};

export const VALID_SAMPLES: Record<string, Record<string, unknown>> = {
  ToolCallRequested: {
    ...envelope,
    type: 'ToolCallRequested',
    roundIndex: 0,
    sequenceIndex: 1,
    toolCallId: 'call_abc123',
    toolName: 'lookup_order',
    arguments: { orderId: 'A-1001', include: ['items'] },
  },
  ToolResultReceived: {
    ...envelope,
    type: 'ToolResultReceived',
    toolCallId: 'call_abc123',
    roundIndex: 0,
    sequenceIndex: 1,
    result: { status: 'shipped', carrier: 'DHL' },
    isError: false,
  },
  RunCompleted: {
    ...envelope,
    type: 'RunCompleted',
    assistantMessageId: 'msg-991',
    finishReason: 'stop',
    usage: { inputTokens: 1530, outputTokens: 212 },
  },
  RunFailed: {
    ...envelope,
    type: 'RunFailed',
    error: { code: 'provider_timeout', message: 'upstream model timed out' },
  },
};

export const MORE_VALID_SAMPLES: Array<[string, Record<string, unknown>]> = [
  ['a call with an empty toolCallId', { ...VALID_SAMPLES.ToolCallRequested, toolCallId: '' }],
  ['a string result', { ...VALID_SAMPLES.ToolResultReceived, result: 'On branch main, nothing to commit', isError: false }],
  ['an array result', { ...VALID_SAMPLES.ToolResultReceived, result: [1, 2, 3] }],
  ['an error result', { ...VALID_SAMPLES.ToolResultReceived, result: 'timeout', isError: true }],
  ['a completion without usage', { ...VALID_SAMPLES.RunCompleted, usage: undefined, finishReason: 'tool_limit' }],
  ['a time with an offset', { ...VALID_SAMPLES.RunFailed, occurredAt: '2026-11-02T12:15:30+02:00' }],
  ['empty arguments', { ...VALID_SAMPLES.ToolCallRequested, arguments: {} }],
  ['an unknown extra property', { ...VALID_SAMPLES.RunCompleted, traceId: 'abc' }],
];

/** [description, sample, field the error must name] */
export const INVALID_SAMPLES: Array<[string, Record<string, unknown>, string]> = [
  ['an unknown type', { ...VALID_SAMPLES.RunFailed, type: 'ToolCallCancelled' }, 'type'],
  ['an unknown schemaVersion', { ...VALID_SAMPLES.RunFailed, schemaVersion: 2 }, 'schemaVersion'],
  ['a missing schemaVersion', { ...VALID_SAMPLES.RunFailed, schemaVersion: undefined }, 'schemaVersion'],
  ['a missing eventId', { ...VALID_SAMPLES.RunFailed, eventId: undefined }, 'eventId'],
  ['an eventId that is not a UUID', { ...VALID_SAMPLES.RunFailed, eventId: 'evt-1' }, 'eventId'],
  ['an empty tenantId', { ...VALID_SAMPLES.ToolCallRequested, tenantId: '' }, 'tenantId'],
  ['an empty conversationId', { ...VALID_SAMPLES.ToolCallRequested, conversationId: '' }, 'conversationId'],
  ['a missing runId', { ...VALID_SAMPLES.ToolResultReceived, runId: undefined }, 'runId'],
  ['an empty channel', { ...VALID_SAMPLES.ToolResultReceived, channel: '' }, 'channel'],
  ['a numeric tenantId', { ...VALID_SAMPLES.ToolResultReceived, tenantId: 7 }, 'tenantId'],
  ['a negative roundIndex', { ...VALID_SAMPLES.ToolCallRequested, roundIndex: -1 }, 'roundIndex'],
  ['a negative sequenceIndex', { ...VALID_SAMPLES.ToolResultReceived, sequenceIndex: -3 }, 'sequenceIndex'],
  ['a fractional roundIndex', { ...VALID_SAMPLES.ToolCallRequested, roundIndex: 1.5 }, 'roundIndex'],
  ['arguments as an array', { ...VALID_SAMPLES.ToolCallRequested, arguments: ['x'] }, 'arguments'],
  ['arguments as a string', { ...VALID_SAMPLES.ToolCallRequested, arguments: '{"a":1}' }, 'arguments'],
  ['missing arguments', { ...VALID_SAMPLES.ToolCallRequested, arguments: undefined }, 'arguments'],
  ['an empty toolName', { ...VALID_SAMPLES.ToolCallRequested, toolName: '' }, 'toolName'],
  ['a null toolCallId', { ...VALID_SAMPLES.ToolCallRequested, toolCallId: null }, 'toolCallId'],
  ['occurredAt without a time', { ...VALID_SAMPLES.RunFailed, occurredAt: '2026-11-02' }, 'occurredAt'],
  ['occurredAt without a zone', { ...VALID_SAMPLES.RunFailed, occurredAt: '2026-11-02T10:15:30' }, 'occurredAt'],
  ['occurredAt as prose', { ...VALID_SAMPLES.RunFailed, occurredAt: 'yesterday' }, 'occurredAt'],
  ['occurredAt on 30 February', { ...VALID_SAMPLES.RunFailed, occurredAt: '2026-02-30T10:15:30Z' }, 'occurredAt'],
  ['a missing result', { ...VALID_SAMPLES.ToolResultReceived, result: undefined }, 'result'],
  ['a null result', { ...VALID_SAMPLES.ToolResultReceived, result: null }, 'result'],
  ['isError as a string', { ...VALID_SAMPLES.ToolResultReceived, isError: 'false' }, 'isError'],
  ['a missing assistantMessageId', { ...VALID_SAMPLES.RunCompleted, assistantMessageId: undefined }, 'assistantMessageId'],
  ['an empty finishReason', { ...VALID_SAMPLES.RunCompleted, finishReason: '' }, 'finishReason'],
  ['negative token usage', { ...VALID_SAMPLES.RunCompleted, usage: { inputTokens: -1, outputTokens: 2 } }, 'usage.inputTokens'],
  ['an error without a code', { ...VALID_SAMPLES.RunFailed, error: { message: 'x' } }, 'error.code'],
  ['an error as a string', { ...VALID_SAMPLES.RunFailed, error: 'boom' }, 'error'],
  ['an id longer than 256 characters', { ...VALID_SAMPLES.RunFailed, runId: 'r'.repeat(257) }, 'runId'],
];

/** JSON.stringify drops undefined properties, which is how "missing" samples are made. */
export const asJson = (sample: Record<string, unknown>): string => JSON.stringify(sample);
