import { randomUUID } from 'node:crypto';
import { CURRENT_SCHEMA_VERSION, ToolEvent } from '../../libs/contract/src';

/** Small deterministic PRNG (mulberry32), so a traffic shape can be reproduced. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOOLS = ['lookup_order', 'search_docs', 'git_status', 'get_weather', 'list_invoices', 'run_sql'];
const WORDS = 'order shipped invoice customer refund status branch commit weather forecast account balance item quantity'.split(' ');
// Now and then, the ids, dates, versions and contact details real tool payloads carry (for the detectors to find or pass over).
const EXTRAS = ['2026-03-14T09:26:53Z', 'A-10293', 'v2.14.1', 'ann.lee@example.org', '+1 415 555 0134'];
const EXTRA_RATE = 0.02;

function text(random: () => number, approxBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < approxBytes) {
    const word = random() < EXTRA_RATE ? EXTRAS[Math.floor(random() * EXTRAS.length)] : WORDS[Math.floor(random() * WORDS.length)];
    parts.push(word);
    size += word.length + 1;
  }
  return parts.join(' ');
}

export interface TrafficOptions {
  tenants?: number;
  conversations?: number;
  seed?: number;
  /** Share of events sent a second time (producer retries), 0..1. */
  duplicateRate?: number;
  argumentBytes?: number;
  resultBytes?: number;
}

/**
 * Agent traffic as the product sees it: runs of 1-4 rounds with 1-3
 * parallel calls each, arguments ~200 B and results ~1 KB, then RunCompleted.
 * Yields events in publish order; duplicates repeat an earlier event as is.
 */
export function* agentTraffic(totalEvents: number, options: TrafficOptions = {}): Generator<ToolEvent> {
  const random = seededRandom(options.seed ?? 42);
  const tenants = options.tenants ?? 20;
  const conversations = options.conversations ?? 2_000;
  const duplicateRate = options.duplicateRate ?? 0;
  const argumentBytes = options.argumentBytes ?? 200;
  const resultBytes = options.resultBytes ?? 1_000;
  let emitted = 0;
  let clock = Date.now();
  const stamp = () => new Date((clock += 3)).toISOString();
  const recent: ToolEvent[] = [];

  while (emitted < totalEvents) {
    const conversation = Math.floor(random() * conversations);
    const scope = {
      schemaVersion: CURRENT_SCHEMA_VERSION,
      tenantId: `tenant-${conversation % tenants}`,
      conversationId: `conv-${conversation}`,
      channel: conversation % 3 === 0 ? 'support' : 'web',
      runId: randomUUID(),
    };
    const rounds = 1 + Math.floor(random() * 4);
    const run: ToolEvent[] = [];
    for (let roundIndex = 0; roundIndex < rounds; roundIndex += 1) {
      const callIds = Array.from({ length: 1 + Math.floor(random() * 3) }, () => `call_${randomUUID().slice(0, 18)}`);
      callIds.forEach((toolCallId, sequenceIndex) =>
        run.push({
          ...scope,
          eventId: randomUUID(),
          type: 'ToolCallRequested',
          occurredAt: stamp(),
          roundIndex,
          sequenceIndex,
          toolCallId,
          toolName: TOOLS[Math.floor(random() * TOOLS.length)],
          arguments: { query: text(random, argumentBytes - 20) },
        }),
      );
      callIds.forEach((toolCallId, sequenceIndex) =>
        run.push({
          ...scope,
          eventId: randomUUID(),
          type: 'ToolResultReceived',
          occurredAt: stamp(),
          roundIndex,
          sequenceIndex,
          toolCallId,
          result: { summary: text(random, resultBytes - 20) },
          isError: random() < 0.03,
        }),
      );
    }
    run.push({
      ...scope,
      eventId: randomUUID(),
      type: 'RunCompleted',
      occurredAt: stamp(),
      assistantMessageId: `msg-${scope.runId}`,
      finishReason: 'stop',
      usage: [{ inputTokens: 500 + Math.floor(random() * 3_000), outputTokens: 20 + Math.floor(random() * 400) }],
    });
    for (const event of run) {
      if (emitted >= totalEvents) return;
      yield event;
      emitted += 1;
      recent.push(event);
      if (recent.length > 100) recent.shift();
      if (duplicateRate > 0 && random() < duplicateRate && emitted < totalEvents) {
        yield recent[Math.floor(random() * recent.length)];
        emitted += 1;
      }
    }
  }
}
