/**
 * Audit query benchmark: ListToolInvocations and SearchToolHistory over
 * gRPC on loopback against a read model of --invocations invocations
 * (default 1,000,000; results ~1 KB of words; 50 tenants over 30 days),
 * with --clients concurrent callers (default 8) for --seconds (default 20)
 * per query kind. Queries vary: listings with no filter, a tool, a
 * conversation, errors only, one day, and the next page; searches for one
 * or two words, a phrase, a word and an exclusion; then substring searches
 * (SEARCH_MATCH_SUBSTRING) of a part of a query word, over the whole tenant
 * (the trigram index) and within one conversation. Two corpora, one after
 * the other: `zipf`, words and identifiers drawn by Zipf's law from a
 * vocabulary of 20,000 (as real tool output has them), and `worst-case`,
 * 140 words a result from a 70-word vocabulary, so every query word is in
 * nearly every document. The last line is one JSON object.
 *
 *   npm run bench:audit -- [--invocations 1000000] [--clients 8] [--seconds 20] [--corpus zipf|worst-case|both] [--keep]
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { resolve } from 'node:path';
import { freePort } from '../test/support/grpc-client';
import { seededRandom } from '../test/support/traffic';
import {
  cpuSeconds,
  intOption,
  parseArgs,
  peakRssMiB,
  percentile,
  startGrpcService,
  stopChild,
  runInBenchSchema,
  closedLoopLoad,
} from './bench-support';
import { seedInvocations, toolVocabulary } from './seed-data';

const PROTO = resolve(__dirname, '../../proto/toolhistory/v1/toolhistory.proto');
const TENANTS = 50;
const TOOLS = ['lookup_order', 'git_status', 'run_sql', 'get_weather'];
const WORDS = ['refund', 'shipped', 'conflict', 'timeout', 'warehouse', 'dividend', 'boarding', 'migration', 'declined', 'README.md'];
const DAY = 86_400;
const SEED_START = Date.parse('2026-10-01T00:00:00Z') / 1000;

type Rpc = (request: Record<string, unknown>) => Promise<Record<string, unknown>>;

function rpcOf(client: grpc.Client, method: string): Rpc {
  return (request) =>
    new Promise((done, fail) =>
      (client as unknown as Record<string, (...args: unknown[]) => void>)[method](
        request,
        { deadline: new Date(Date.now() + 10_000) },
        (error: Error | null, response: Record<string, unknown>) => (error ? fail(error) : done(response)),
      ),
    );
}

async function measure(clients: number, seconds: number, oneCall: (random: () => number) => Promise<unknown>) {
  const randoms = Array.from({ length: clients }, (_, i) => seededRandom(100 + i));
  const { latencies, errors, elapsedSeconds } = await closedLoopLoad(clients, seconds, (i) => oneCall(randoms[i]));
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    requests: latencies.length,
    errors,
    requestsPerSecond: Math.round(latencies.length / elapsedSeconds),
    p50Ms: round(percentile(latencies, 50)),
    p99Ms: round(percentile(latencies, 99)),
    maxMs: round(latencies[latencies.length - 1] ?? NaN),
  };
}

type Corpus = 'zipf' | 'worst-case';
const VOCABULARY_SIZE = 20_000;
/** Query words skip the most common ranks, which nobody searches for alone. */
const MOST_COMMON_SKIPPED = 10;

function main(): void {
  const { values } = parseArgs({
    options: {
      invocations: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      corpus: { type: 'string' },
      keep: { type: 'boolean' },
    },
  });
  const invocations = intOption(values, 'invocations', 1_000_000);
  const clients = intOption(values, 'clients', 8);
  const seconds = intOption(values, 'seconds', 20);
  const corpusOption = values.corpus ?? 'both';
  if (!['zipf', 'worst-case', 'both'].includes(corpusOption))
    throw new Error(`--corpus must be zipf, worst-case or both, not ${corpusOption}`);
  const corpora: Corpus[] = corpusOption === 'both' ? ['zipf', 'worst-case'] : [corpusOption as Corpus];
  const vocabulary = toolVocabulary(VOCABULARY_SIZE, seededRandom(7));
  runInBenchSchema('bench_audit', values.keep === true, async ({ pool, schema, databaseUrl }) => {
    const results: Record<string, unknown>[] = [];
    for (const corpus of corpora) {
      if (results.length > 0)
        await pool.query('TRUNCATE events, conversations, runs, invocations, invocation_search, invocation_substring');
      console.log(`seeding ${invocations} invocations (${corpus} corpus) into ${schema}`);
      const seedStarted = Date.now();
      await seedInvocations(pool, { invocations, tenants: TENANTS, vocabulary: corpus === 'zipf' ? vocabulary : undefined }, (done) =>
        process.stdout.write(`  ${done}\r`),
      );
      console.log(`  seeded in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
      results.push(await measureCorpus({ corpus, pool, schema, databaseUrl, invocations, clients, seconds, vocabulary }));
    }
    console.log(JSON.stringify({ bench: 'audit', invocations, clients, seconds, corpora: results }));
  });
}

async function measureCorpus(options: {
  corpus: Corpus;
  pool: import('pg').Pool;
  schema: string;
  databaseUrl: string;
  invocations: number;
  clients: number;
  seconds: number;
  vocabulary: readonly string[];
}): Promise<Record<string, unknown>> {
  const { corpus, pool, schema, databaseUrl, invocations, clients, seconds, vocabulary } = options;
  let service: Awaited<ReturnType<typeof startGrpcService>> | undefined;
  try {
    const port = await freePort();
    service = await startGrpcService({ databaseUrl, schema, port });
    const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      toolhistory: { v1: { ToolHistory: grpc.ServiceClientConstructor } };
    };
    const channels = Array.from(
      { length: 4 },
      () => new loaded.toolhistory.v1.ToolHistory(`127.0.0.1:${port}`, grpc.credentials.createInsecure()),
    );
    const pick = <T>(random: () => number, list: readonly T[]) => list[Math.floor(random() * list.length)];
    const tenant = (random: () => number) => `seed-tenant-${Math.floor(random() * TENANTS)}`;
    // A query word as the corpus has them: by Zipf rank in the realistic corpus, any word of the 70 in the worst case.
    const queryWord = (random: () => number): string => {
      if (corpus === 'worst-case') return pick(random, WORDS);
      for (;;) {
        const rank = Math.floor(Math.pow(vocabulary.length + 1, random()));
        if (rank > MOST_COMMON_SKIPPED && rank <= vocabulary.length) return vocabulary[rank - 1];
      }
    };
    // A part of a query word, at least 3 characters and inside the word where it is long enough ("efun" of "refund").
    const queryFragment = (random: () => number): string => {
      for (;;) {
        const word = queryWord(random);
        if (word.length < 3) continue;
        const length = Math.min(word.length, 3 + Math.floor(random() * 3));
        const start = Math.floor(random() * (word.length - length + 1));
        return word.slice(start, start + length);
      }
    };
    let call = 0;
    const channel = () => channels[call++ % channels.length];

    const list = async (random: () => number) => {
      const kind = Math.floor(random() * 6);
      const request: Record<string, unknown> = { tenant_id: tenant(random), page_size: 100 };
      if (kind === 1) request.tool_name = pick(random, TOOLS);
      if (kind === 2) request.conversation_id = `seed-conv-${Math.floor(random() * (invocations / 40))}`;
      if (kind === 3) request.status = 'INVOCATION_STATUS_ERROR';
      if (kind === 4) {
        const day = SEED_START + Math.floor(random() * 29) * DAY;
        Object.assign(request, { from: { seconds: String(day), nanos: 0 }, to: { seconds: String(day + DAY), nanos: 0 } });
      }
      const first = await rpcOf(channel(), 'ListToolInvocations')(request);
      if (kind === 5 && first.next_page_token)
        await rpcOf(channel(), 'ListToolInvocations')({ ...request, page_token: first.next_page_token });
    };
    let hits = 0;
    let searches = 0;
    const search = async (random: () => number) => {
      const kind = Math.floor(random() * 4);
      const a = queryWord(random);
      const b = queryWord(random);
      const query = kind === 0 ? a : kind === 1 ? `${a} ${b}` : kind === 2 ? `"${a} ${b}"` : `${a} -${b}`;
      const answer = await rpcOf(channel(), 'SearchToolHistory')({ tenant_id: tenant(random), query, limit: 20 });
      hits += (answer.hits as unknown[]).length;
      searches += 1;
    };

    const substringSearch = (withinConversation: boolean) => async (random: () => number) => {
      const conversation = Math.floor(random() * (invocations / 40));
      const request: Record<string, unknown> = withinConversation
        ? { tenant_id: `seed-tenant-${conversation % TENANTS}`, conversation_id: `seed-conv-${conversation}` }
        : { tenant_id: tenant(random) };
      const answer = await rpcOf(
        channel(),
        'SearchToolHistory',
      )({
        ...request,
        query: queryFragment(random),
        match: 'SEARCH_MATCH_SUBSTRING',
        limit: 20,
      });
      hits += (answer.hits as unknown[]).length;
      searches += 1;
    };
    const meanHits = () => Math.round((hits / Math.max(1, searches)) * 10) / 10;

    // Warm-up, so the first figures do not include cold caches.
    await measure(clients, 3, list);
    await measure(clients, 3, search);
    await measure(clients, 3, substringSearch(false));
    const cpuBefore = cpuSeconds(service.pid!);
    const listFigures = await measure(clients, seconds, list);
    hits = 0;
    searches = 0;
    const searchFigures = { ...(await measure(clients, seconds, search)), meanHits: meanHits() };
    hits = 0;
    searches = 0;
    const substringFigures = { ...(await measure(clients, seconds, substringSearch(false))), meanHits: meanHits() };
    hits = 0;
    searches = 0;
    const conversationSubstringFigures = { ...(await measure(clients, seconds, substringSearch(true))), meanHits: meanHits() };
    const serviceCpu = cpuSeconds(service.pid!) - cpuBefore;
    channels.forEach((c) => c.close());
    const { rows } = await pool.query<{ invocations: number; search: number; substring: number; trigramIndex: number }>(
      `SELECT (pg_total_relation_size('invocations') / 1048576)::int AS invocations, (pg_total_relation_size('invocation_search') / 1048576)::int AS search, (pg_total_relation_size('invocation_substring') / 1048576)::int AS substring,
              (pg_relation_size('invocation_substring_tenant_text_idx') / 1048576)::int AS "trigramIndex"`,
    );
    const figures = {
      corpus,
      invocationsTableMiB: rows[0].invocations,
      searchTableMiB: rows[0].search,
      substringTableMiB: rows[0].substring,
      trigramIndexMiB: rows[0].trigramIndex,
      listToolInvocations: listFigures,
      searchToolHistory: searchFigures,
      searchToolHistorySubstring: substringFigures,
      searchToolHistorySubstringInConversation: conversationSubstringFigures,
      serviceCpuSeconds: Number(serviceCpu.toFixed(1)),
      servicePeakRssMiB: peakRssMiB(service.pid!),
    };
    console.log(
      `[${corpus}] ListToolInvocations: ${listFigures.requestsPerSecond} requests/s, p50 ${listFigures.p50Ms} ms, p99 ${listFigures.p99Ms} ms (${clients} callers)`,
    );
    console.log(
      `[${corpus}] SearchToolHistory:   ${searchFigures.requestsPerSecond} requests/s, p50 ${searchFigures.p50Ms} ms, p99 ${searchFigures.p99Ms} ms (${clients} callers; target p99 ${corpus === 'zipf' ? 50 : 300} ms)`,
    );
    console.log(
      `[${corpus}] SearchToolHistory substring, tenant:       ${substringFigures.requestsPerSecond} requests/s, p50 ${substringFigures.p50Ms} ms, p99 ${substringFigures.p99Ms} ms, ${substringFigures.meanHits} hits`,
    );
    console.log(
      `[${corpus}] SearchToolHistory substring, conversation: ${conversationSubstringFigures.requestsPerSecond} requests/s, p50 ${conversationSubstringFigures.p50Ms} ms, p99 ${conversationSubstringFigures.p99Ms} ms, ${conversationSubstringFigures.meanHits} hits`,
    );
    return figures;
  } finally {
    await stopChild(service);
  }
}

main();
