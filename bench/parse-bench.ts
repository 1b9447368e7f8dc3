/**
 * What checking an event against the contract costs the recorder per event:
 * parseToolEvent (JSON parse, the compiled schema, and the classes only for
 * an event the schema refuses) beside the validation classes alone, on the
 * bench traffic (arguments ~200 B, results ~1 KB), in this process.
 *
 *   npm run bench:parse [-- --events 100000 --rounds 5]
 *
 * The last line printed is one JSON object with the figures.
 */
import { parseArgs } from 'node:util';
import { parseToolEvent, validateToolEventWithClasses } from '../libs/contract/src/parse-tool-event';
import { agentTraffic } from '../test/support/traffic';
import { intOption } from './bench-support';

const { values } = parseArgs({ options: { events: { type: 'string' }, rounds: { type: 'string' } } });
const events = intOption(values, 'events', 100_000);
const rounds = intOption(values, 'rounds', 5);
const messages = [...agentTraffic(events, { seed: 11, tenants: 4, conversations: 2_000, duplicateRate: 0 })].map((e) =>
  Buffer.from(JSON.stringify(e)),
);

/** The best of `rounds` timed passes over every message (the first warms the JIT). */
function eventsPerSecond(check: (message: Buffer) => boolean): number {
  let best = 0;
  for (let round = 0; round <= rounds; round++) {
    const started = process.hrtime.bigint();
    for (const message of messages) if (!check(message)) throw new Error('a bench event was refused');
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (round > 0) best = Math.max(best, messages.length / seconds);
  }
  return Math.round(best);
}

const hotPath = eventsPerSecond((m) => parseToolEvent(m).ok);
const classes = eventsPerSecond((m) => validateToolEventWithClasses(JSON.parse(m.toString('utf8'))).ok);
console.log(`parseToolEvent (compiled schema): ${hotPath.toLocaleString('en')} events/s, ${(1e6 / hotPath).toFixed(1)} us/event`);
console.log(`JSON.parse + validation classes:   ${classes.toLocaleString('en')} events/s, ${(1e6 / classes).toFixed(1)} us/event`);
console.log(
  JSON.stringify({
    events: messages.length,
    compiledSchemaEventsPerSecond: hotPath,
    classesEventsPerSecond: classes,
    speedup: +(hotPath / classes).toFixed(2),
  }),
);
