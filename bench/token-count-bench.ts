/**
 * What counting tokens costs the recorder: o200kTokens (o200k_base through
 * ai-tokenizer) over the call and result texts of the bench traffic
 * (arguments ~200 B, results ~1 KB), as the projection counts them once per
 * invocation, in this process. Prints the first count's rank-table load,
 * then texts, MB and tokens per second (best of --rounds passes).
 *
 *   npm run bench:tokens [-- --events 50000 --rounds 5]
 *
 * The last line printed is one JSON object with the figures.
 */
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

const loadStarted = process.hrtime.bigint();
o200kTokens('warm up');
const loadMs = Number(process.hrtime.bigint() - loadStarted) / 1e6;

let best = Number.POSITIVE_INFINITY;
let tokens = 0;
for (let round = 0; round <= rounds; round++) {
  const started = process.hrtime.bigint();
  tokens = 0;
  for (const text of texts) tokens += o200kTokens(text);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (round > 0) best = Math.min(best, seconds);
}
const figures = {
  bench: 'tokens',
  tokenizer: 'ai-tokenizer o200k_base',
  texts: texts.length,
  megabytes: Math.round(bytes / 1e4) / 100,
  tokens,
  rankTableLoadMs: Math.round(loadMs),
  textsPerSecond: Math.round(texts.length / best),
  megabytesPerSecond: Math.round((bytes / 1e6 / best) * 10) / 10,
  tokensPerSecond: Math.round(tokens / best),
  microsecondsPerEvent: Math.round((best / events) * 1e7) / 10,
};
console.log(
  `${figures.texts} texts (${figures.megabytes} MB, ${tokens} tokens): ${figures.textsPerSecond} texts/s, ` +
    `${figures.megabytesPerSecond} MB/s, ${figures.microsecondsPerEvent} µs per event; rank table loaded in ${figures.rankTableLoadMs} ms`,
);
console.log(JSON.stringify(figures));
