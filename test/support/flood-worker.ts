import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { type CallResult, closedLoop, floodCallers, type FloodClient, type FloodLoad, openLoop } from './flood';

/** One share of a load, on a thread of its own (see `loadInWorkers`): its results go back as columns. */
type FloodShare = FloodLoad & { client?: FloodClient };

const OUTCOMES: CallResult['outcome'][] = ['answered', 'refused', 'deadline', 'other'];

async function run(share: FloodShare): Promise<void> {
  const callers = floodCallers(share.client ?? 'grpc-js', share.port, share.callers, share.windowBytes);
  // How late this thread's own event loop ran: a lag that shows in every latency it measures.
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  try {
    const oneCall = (i: number) => callers.call(i, share.request, share.deadlineMs);
    const results =
      share.loop === 'open'
        ? await openLoop(share.rate, share.seconds, oneCall)
        : (await closedLoop(share.callers, share.seconds, oneCall)).results;
    parentPort!.postMessage({
      ms: Float64Array.from(results, (r) => r.ms),
      sentLateMs: Float64Array.from(results, (r) => r.sentLateMs ?? 0),
      outcome: Uint8Array.from(results, (r) => OUTCOMES.indexOf(r.outcome)),
      pushbackMs: Float64Array.from(results, (r) => r.pushbackMs ?? -1),
      codes: results.map((r) => r.code),
      lagP99Ms: lag.percentile(99) / 1e6,
    });
  } finally {
    lag.disable();
    callers.close();
  }
}

void run(workerData as FloodShare);
