/**
 * What counting tokens costs the recorder: o200kTokens (o200k_base through
 * ai-tokenizer) over the call and result texts of the bench traffic
 * (arguments ~200 B, results ~1 KB), as the projection counts them once per
 * invocation, in this process, beside js-tiktoken (the reference its counts
 * must equal). Prints each one's first count (the rank table's load), then
 * texts and MB per second and µs per event (best of --rounds passes).
 *
 *   npm run bench:tokens [-- --events 50000 --rounds 5]
 *
 * The last line printed is one JSON object with the figures.
 */
import { Tiktoken } from 'js-tiktoken/lite';
import { parseArgs } from 'node:util';
import { resultText } from '../libs/domain/src';
import { o200kTokens } from '../libs/tokenizer/src';
import { agentTraffic } from '../test/support/traffic';
import { intOption } from './bench-support';

const { values } = parseArgs({ options: { events: { type: 'string' }, rounds: { type: 'string' } } });
const events = intOption(values, 'events', 50_000);
const rounds = intOption(values, 'rounds', 5);
const texts: string[] = [];
for (const e of agentTraffic(events, { seed: 11, tenants: 4, conversations: 2_000, duplicateRate: 0 })) {
  if (e.type === 'ToolCallRequested') texts.push(e.toolName, JSON.stringify(e.arguments));
  else if (e.type === 'ToolResultReceived') texts.push(resultText(e.result));
}
const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);

// js-tiktoken, the JavaScript port of tiktoken, beside it: the reference the counter is tested against.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base'));

/** The first count (loading the rank table), then the best of `rounds` passes over every text. */
function measure(name: string, count: (text: string) => number) {
  const loadStarted = process.hrtime.bigint();
  count('warm up');
  const loadMs = Number(process.hrtime.bigint() - loadStarted) / 1e6;
  let best = Number.POSITIVE_INFINITY;
  let tokens = 0;
  for (let round = 0; round <= rounds; round++) {
    const started = process.hrtime.bigint();
    tokens = 0;
    for (const text of texts) tokens += count(text);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (round > 0) best = Math.min(best, seconds);
  }
  const figures = {
    tokenizer: name,
    tokens,
    firstCountMs: Math.round(loadMs),
    textsPerSecond: Math.round(texts.length / best),
    megabytesPerSecond: Math.round((bytes / 1e6 / best) * 10) / 10,
    microsecondsPerEvent: Math.round((best / events) * 1e7) / 10,
  };
  console.log(
    `${name}: ${figures.textsPerSecond} texts/s, ${figures.megabytesPerSecond} MB/s, ${figures.microsecondsPerEvent} µs per event, ` +
      `${tokens} tokens; first count (rank table) ${figures.firstCountMs} ms`,
  );
  return figures;
}

console.log(`${texts.length} texts, ${(bytes / 1e6).toFixed(2)} MB`);
const counter = measure('ai-tokenizer o200k_base (o200kTokens)', o200kTokens);
const jsTiktoken = measure('js-tiktoken o200k_base', (text) => reference.encode(text, [], []).length);
if (counter.tokens !== jsTiktoken.tokens) throw new Error(`the counts differ: ${counter.tokens} against ${jsTiktoken.tokens}`);
console.log(JSON.stringify({ bench: 'tokens', events, texts: texts.length, bytes, counter, reference: jsTiktoken }));
