/**
 * Samples shared by the contract tests: each valid sample must pass both
 * the classes and the JSON Schema; each invalid one must fail both.
 */
const envelope = {
  eventId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  schemaVersion: 2,
  tenantId: 'acme',
  conversationId: 'conv-42',
  channel: 'support',
  runId: 'run-7',
  occurredAt: '2026-11-02T10:15:30.123Z',
};

/** One sample per type, in the current schema version. */
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
  ToolApprovalRequested: {
    ...envelope,
    type: 'ToolApprovalRequested',
    toolCallId: 'call_refund1',
    roundIndex: 1,
    sequenceIndex: 0,
    reason: 'refunds over 100 EUR need a person',
  },
  ToolApprovalDecided: {
    ...envelope,
    runId: 'run-8',
    type: 'ToolApprovalDecided',
    toolCallId: 'call_refund1',
    roundIndex: 1,
    sequenceIndex: 0,
    approved: false,
    reason: 'customer already refunded',
    decidedBy: 'agent-desk-3',
  },
  RunCompleted: {
    ...envelope,
    type: 'RunCompleted',
    assistantMessageId: 'msg-991',
    finishReason: 'stop',
    usage: [
      { inputTokens: 1100, outputTokens: 64, model: 'model-large' },
      { inputTokens: 430, outputTokens: 148 },
    ],
  },
  RunFailed: {
    ...envelope,
    type: 'RunFailed',
    error: { code: 'provider_timeout', message: 'upstream model timed out' },
  },
};

/** A RunCompleted as schemaVersion 1 defined it: one usage total for the run. */
export const RUN_COMPLETED_V1: Record<string, unknown> = {
  ...VALID_SAMPLES.RunCompleted,
  schemaVersion: 1,
  usage: { inputTokens: 1530, outputTokens: 212 },
};

const usageEntry = { inputTokens: 5, outputTokens: 1 };

export const MORE_VALID_SAMPLES: Array<[string, Record<string, unknown>]> = [
  ['a version 1 completion', RUN_COMPLETED_V1],
  ['a version 1 completion without usage', { ...RUN_COMPLETED_V1, usage: undefined }],
  ['a version 1 call', { ...VALID_SAMPLES.ToolCallRequested, schemaVersion: 1 }],
  ['a version 1 result', { ...VALID_SAMPLES.ToolResultReceived, schemaVersion: 1 }],
  ['a version 1 failure', { ...VALID_SAMPLES.RunFailed, schemaVersion: 1 }],
  ['an empty usage list', { ...VALID_SAMPLES.RunCompleted, usage: [] }],
  ['usage entries without a model', { ...VALID_SAMPLES.RunCompleted, usage: [usageEntry, usageEntry] }],
  ['a model of 256 characters', { ...VALID_SAMPLES.RunCompleted, usage: [{ ...usageEntry, model: 'm'.repeat(256) }] }],
  ['1000 usage entries', { ...VALID_SAMPLES.RunCompleted, usage: Array.from({ length: 1_000 }, () => usageEntry) }],
  ['a call with an empty toolCallId', { ...VALID_SAMPLES.ToolCallRequested, toolCallId: '' }],
  ['a string result', { ...VALID_SAMPLES.ToolResultReceived, result: 'On branch main, nothing to commit', isError: false }],
  ['an array result', { ...VALID_SAMPLES.ToolResultReceived, result: [1, 2, 3] }],
  ['an error result', { ...VALID_SAMPLES.ToolResultReceived, result: 'timeout', isError: true }],
  ['a completion without usage', { ...VALID_SAMPLES.RunCompleted, usage: undefined, finishReason: 'tool_limit' }],
  ['a time with an offset', { ...VALID_SAMPLES.RunFailed, occurredAt: '2026-11-02T12:15:30+02:00' }],
  ['empty arguments', { ...VALID_SAMPLES.ToolCallRequested, arguments: {} }],
  ['an unknown extra property', { ...VALID_SAMPLES.RunCompleted, traceId: 'abc' }],
  ['a call with the user message that started the run', { ...VALID_SAMPLES.ToolCallRequested, userMessageId: 'msg-990' }],
  ['a call cut by its producer', { ...VALID_SAMPLES.ToolCallRequested, originalBytes: 3_145_728 }],
  ['a result cut by its producer', { ...VALID_SAMPLES.ToolResultReceived, originalBytes: 3_145_728 }],
  ['an approval request without a reason', { ...VALID_SAMPLES.ToolApprovalRequested, reason: undefined }],
  [
    'an approval without reason or decider',
    { ...VALID_SAMPLES.ToolApprovalDecided, approved: true, reason: undefined, decidedBy: undefined },
  ],
  ['a failure with usage', { ...VALID_SAMPLES.RunFailed, usage: [usageEntry, { ...usageEntry, model: 'model-large' }] }],
  ['a version 1 approval', { ...VALID_SAMPLES.ToolApprovalDecided, schemaVersion: 1 }],
  [
    'a call redacted by its producer',
    { ...VALID_SAMPLES.ToolCallRequested, arguments: { orderId: '[hidden]' }, producerRedacted: true, redaction: { persist: 'full' } },
  ],
  [
    'a call whose producer kept only the size',
    { ...VALID_SAMPLES.ToolCallRequested, arguments: {}, originalBytes: 42, producerRedacted: true, redaction: { persist: 'metadata' } },
  ],
  [
    'a result whose producer kept only the size',
    { ...VALID_SAMPLES.ToolResultReceived, result: null, originalBytes: 40, producerRedacted: true, redaction: { persist: 'metadata' } },
  ],
  [
    'a result whose producer kept nothing',
    { ...VALID_SAMPLES.ToolResultReceived, result: null, producerRedacted: true, redaction: { persist: 'none' } },
  ],
  [
    "a producer's redaction with other members (ignored)",
    { ...VALID_SAMPLES.ToolResultReceived, producerRedacted: true, redaction: { persist: 'full', counts: { email: 1 } } },
  ],
  ["a producer's redaction without producerRedacted (ignored)", { ...VALID_SAMPLES.ToolCallRequested, redaction: { persist: 'banana' } }],
];

/** [description, sample, field the error must name] */
export const INVALID_SAMPLES: Array<[string, Record<string, unknown>, string]> = [
  ['an unknown type', { ...VALID_SAMPLES.RunFailed, type: 'ToolCallCancelled' }, 'type'],
  ['an unknown schemaVersion', { ...VALID_SAMPLES.RunFailed, schemaVersion: 3 }, 'schemaVersion'],
  ['schemaVersion 0', { ...VALID_SAMPLES.RunFailed, schemaVersion: 0 }, 'schemaVersion'],
  ['a missing schemaVersion', { ...VALID_SAMPLES.RunFailed, schemaVersion: undefined }, 'schemaVersion'],
  ['a missing eventId', { ...VALID_SAMPLES.RunFailed, eventId: undefined }, 'eventId'],
  ['an eventId that is not a UUID', { ...VALID_SAMPLES.RunFailed, eventId: 'evt-1' }, 'eventId'],
  ['an empty tenantId', { ...VALID_SAMPLES.ToolCallRequested, tenantId: '' }, 'tenantId'],
  ['an empty conversationId', { ...VALID_SAMPLES.ToolCallRequested, conversationId: '' }, 'conversationId'],
  ['a missing runId', { ...VALID_SAMPLES.ToolResultReceived, runId: undefined }, 'runId'],
  ['an empty channel', { ...VALID_SAMPLES.ToolResultReceived, channel: '' }, 'channel'],
  ['a numeric tenantId', { ...VALID_SAMPLES.ToolResultReceived, tenantId: 7 }, 'tenantId'],
  ['a negative roundIndex', { ...VALID_SAMPLES.ToolCallRequested, roundIndex: -1 }, 'roundIndex'],
  ['a roundIndex beyond 32 bits', { ...VALID_SAMPLES.ToolCallRequested, roundIndex: 2_147_483_648 }, 'roundIndex'],
  ['a sequenceIndex beyond 32 bits', { ...VALID_SAMPLES.ToolResultReceived, sequenceIndex: 1e15 }, 'sequenceIndex'],
  ['a token count beyond 32 bits', { ...VALID_SAMPLES.RunCompleted, usage: [{ inputTokens: 2 ** 31, outputTokens: 1 }] }, 'usage'],
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
  [
    'a version 2 completion with a usage object',
    { ...VALID_SAMPLES.RunCompleted, usage: { inputTokens: 1530, outputTokens: 212 } },
    'usage',
  ],
  ['a version 1 completion with a usage list', { ...RUN_COMPLETED_V1, usage: [{ inputTokens: 1530, outputTokens: 212 }] }, 'usage'],
  ['a null usage', { ...VALID_SAMPLES.RunCompleted, usage: null }, 'usage'],
  ['a null version 1 usage', { ...RUN_COMPLETED_V1, usage: null }, 'usage'],
  ['negative version 1 token usage', { ...RUN_COMPLETED_V1, usage: { inputTokens: -1, outputTokens: 2 } }, 'usage.inputTokens'],
  ['version 1 usage without outputTokens', { ...RUN_COMPLETED_V1, usage: { inputTokens: 1 } }, 'usage.outputTokens'],
  [
    'negative token usage',
    { ...VALID_SAMPLES.RunCompleted, usage: [usageEntry, { inputTokens: -1, outputTokens: 2 }] },
    'usage.1.inputTokens',
  ],
  ['fractional token usage', { ...VALID_SAMPLES.RunCompleted, usage: [{ inputTokens: 1, outputTokens: 2.5 }] }, 'usage.0.outputTokens'],
  ['a usage entry without outputTokens', { ...VALID_SAMPLES.RunCompleted, usage: [{ inputTokens: 1 }] }, 'usage.0.outputTokens'],
  ['a usage entry that is not an object', { ...VALID_SAMPLES.RunCompleted, usage: [usageEntry, 7] }, 'usage'],
  ['a usage entry that is a list', { ...VALID_SAMPLES.RunCompleted, usage: [[]] }, 'usage'],
  ['an empty model', { ...VALID_SAMPLES.RunCompleted, usage: [{ ...usageEntry, model: '' }] }, 'usage.0.model'],
  ['a null model', { ...VALID_SAMPLES.RunCompleted, usage: [{ ...usageEntry, model: null }] }, 'usage.0.model'],
  [
    'a model longer than 256 characters',
    { ...VALID_SAMPLES.RunCompleted, usage: [{ ...usageEntry, model: 'm'.repeat(257) }] },
    'usage.0.model',
  ],
  ['more than 1000 usage entries', { ...VALID_SAMPLES.RunCompleted, usage: Array.from({ length: 1_001 }, () => usageEntry) }, 'usage'],
  ['an error without a code', { ...VALID_SAMPLES.RunFailed, error: { message: 'x' } }, 'error.code'],
  ['an error as a string', { ...VALID_SAMPLES.RunFailed, error: 'boom' }, 'error'],
  ['an id longer than 256 characters', { ...VALID_SAMPLES.RunFailed, runId: 'r'.repeat(257) }, 'runId'],
  ['an empty userMessageId', { ...VALID_SAMPLES.ToolCallRequested, userMessageId: '' }, 'userMessageId'],
  ['a null userMessageId', { ...VALID_SAMPLES.RunFailed, userMessageId: null }, 'userMessageId'],
  ['a negative originalBytes', { ...VALID_SAMPLES.ToolResultReceived, originalBytes: -1 }, 'originalBytes'],
  ['a fractional originalBytes', { ...VALID_SAMPLES.ToolCallRequested, originalBytes: 1.5 }, 'originalBytes'],
  ['an approval request with an empty toolCallId', { ...VALID_SAMPLES.ToolApprovalRequested, toolCallId: '' }, 'toolCallId'],
  ['an approval request without a sequenceIndex', { ...VALID_SAMPLES.ToolApprovalRequested, sequenceIndex: undefined }, 'sequenceIndex'],
  ['an approval request with a numeric reason', { ...VALID_SAMPLES.ToolApprovalRequested, reason: 42 }, 'reason'],
  ['a decision without approved', { ...VALID_SAMPLES.ToolApprovalDecided, approved: undefined }, 'approved'],
  ['a decision with approved as a string', { ...VALID_SAMPLES.ToolApprovalDecided, approved: 'yes' }, 'approved'],
  ['a decision with an empty decidedBy', { ...VALID_SAMPLES.ToolApprovalDecided, decidedBy: '' }, 'decidedBy'],
  ['a decision with a null reason', { ...VALID_SAMPLES.ToolApprovalDecided, reason: null }, 'reason'],
  ['a failure with a usage object', { ...VALID_SAMPLES.RunFailed, usage: usageEntry }, 'usage'],
  [
    'producerRedacted false',
    { ...VALID_SAMPLES.ToolCallRequested, producerRedacted: false, redaction: { persist: 'full' } },
    'producerRedacted',
  ],
  ['producerRedacted without redaction', { ...VALID_SAMPLES.ToolCallRequested, producerRedacted: true }, 'redaction'],
  [
    "a producer's redaction without persist",
    { ...VALID_SAMPLES.ToolResultReceived, producerRedacted: true, redaction: {} },
    'redaction.persist',
  ],
  [
    "a producer's unknown persist",
    { ...VALID_SAMPLES.ToolCallRequested, producerRedacted: true, redaction: { persist: 'some' } },
    'redaction.persist',
  ],
  [
    'a null result the producer says it kept',
    { ...VALID_SAMPLES.ToolResultReceived, result: null, producerRedacted: true, redaction: { persist: 'full' } },
    'result',
  ],
  [
    'a null result without producerRedacted',
    { ...VALID_SAMPLES.ToolResultReceived, result: null, redaction: { persist: 'none' } },
    'result',
  ],
  [
    'a withheld result that is missing',
    { ...VALID_SAMPLES.ToolResultReceived, result: undefined, producerRedacted: true, redaction: { persist: 'none' } },
    'result',
  ],
];

/** JSON.stringify drops undefined properties, which is how "missing" samples are made. */
export const asJson = (sample: Record<string, unknown>): string => JSON.stringify(sample);
