import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { DEFAULT_CHANNEL_OPTIONS } from '../libs/client/src/tool-history-client';
import { TENANT_METADATA_KEY } from '../libs/contract/src/request-metadata';
import { findProjectFile } from '../apps/toolhistory/src/find-project-file';
import { type CallResult, type FloodClient, type FloodLoad, loadInWorkers, type Outcome, replayMethod } from '../test/support/flood';

/**
 * The overload benchmark's load generators: what sends its sustainable
 * phase's closed loop and its floods' open loops. On two cores the generator
 * shares the machine with the service it measures, so what it spends a call
 * is taken from the service: `go` (bench/floodgen, grpc-go's client in a
 * process of its own) spends about 40% of what `node` (Node.js worker
 * threads, test/support/flood.ts) does a call (ADR 038).
 */
export type GeneratorKind = 'go' | 'node';

export interface LoadGenerator {
  readonly kind: GeneratorKind;
  /** The process whose CPU is the generator's (for node, this one: it also runs the benchmark). */
  readonly pid: number;
  run(load: FloodLoad): Promise<{ results: CallResult[]; generatorLagP99Ms: number }>;
  close(): Promise<void>;
}

/** Node.js callers in `threads` worker threads (`client`: bare HTTP/2 or grpc-js). */
export function nodeGenerator(threads: number, client: FloodClient): LoadGenerator {
  return {
    kind: 'node',
    pid: process.pid,
    run: (load) => loadInWorkers(threads, { ...load, client }),
    close: async () => undefined,
  };
}

const OUTCOMES: Outcome[] = ['answered', 'refused', 'deadline', 'other'];

interface GoResults {
  ms: number[];
  sentLateMs: number[];
  outcome: number[];
  codes: string[];
  pushbackMs: number[];
  lagP99Ms: number;
  error?: string;
}

/**
 * bench/floodgen (grpc-go's client), built with the machine's Go into
 * dist/bench/ (`go` on the PATH) and started once: each load is one line of
 * JSON to its stdin, its results one line back. It starts with this
 * process's CPU affinity, so --generator-cpus holds for it too.
 */
export async function goGenerator(): Promise<LoadGenerator> {
  const source = dirname(findProjectFile('bench/floodgen/go.mod', __dirname));
  const binary = resolve(__dirname, 'floodgen');
  try {
    execFileSync('go', ['build', '-o', binary, '.'], { cwd: source, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    throw new Error(`go build of ${source} failed (it needs Go 1.26 or later on the PATH; --generator node needs none): ${detail}`, {
      cause: error,
    });
  }
  const child: ChildProcess = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const exited = new Promise<never>((_, fail) =>
    child.once('exit', (code, signal) => fail(new Error(`the Go load generator ended (${code ?? signal})`))),
  );
  exited.catch(() => undefined);
  const method = replayMethod();
  let queue: Promise<unknown> = Promise.resolve();
  const runOne = async (load: FloodLoad) => {
    child.stdin!.write(
      JSON.stringify({
        loop: load.loop,
        rate: load.rate,
        callers: load.callers,
        seconds: load.seconds,
        target: `127.0.0.1:${load.port}`,
        connections: load.callers,
        windowBytes: load.windowBytes ?? DEFAULT_CHANNEL_OPTIONS['grpc-node.flow_control_window'],
        path: method.path,
        message: method.requestSerialize(load.request).toString('base64'),
        // As the client package sends it: a call the service would refuse at once is refused from its headers.
        headers: load.request.tenant_id ? { [TENANT_METADATA_KEY]: load.request.tenant_id } : {},
        deadlineMs: load.deadlineMs,
      }) + '\n',
    );
    const line = await Promise.race([lines.next(), exited]);
    if (line.done) throw new Error('the Go load generator closed its output');
    const r = JSON.parse(line.value) as GoResults;
    if (r.error) throw new Error(`the Go load generator refused the load: ${r.error}`);
    return {
      results: r.ms.map((ms, i) => ({
        ms,
        sentLateMs: r.sentLateMs[i],
        outcome: OUTCOMES[r.outcome[i]],
        code: r.codes[i],
        ...(r.pushbackMs[i] >= 0 ? { pushbackMs: r.pushbackMs[i] } : {}),
      })),
      generatorLagP99Ms: r.lagP99Ms,
    };
  };
  return {
    kind: 'go',
    pid: child.pid!,
    // One load at a time: each answer is the next line.
    run: (load) => {
      const next = queue.then(() => runOne(load));
      queue = next.catch(() => undefined);
      return next;
    },
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const ended = new Promise((done) => child.once('exit', done));
      child.stdin!.end();
      await ended;
    },
  };
}
