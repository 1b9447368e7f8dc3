import type { Http2Server, Http2SecureServer, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { type Server, status } from '@grpc/grpc-js';
import { TENANT_METADATA_KEY } from '@toolhistory/contract';
import type { ReadAdmission } from '../admission/read-admission';
import { ADMITTED_METHODS, MAX_TENANT_KEY, refusalDetails } from './admission-interceptor';
import { RETRY_PUSHBACK_KEY } from './grpc-status';

type AnyHttp2Server = Http2Server | Http2SecureServer;
type StreamListener = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

/** Counts what the gate refused, by lane (the limiter counts each refusal too). */
export type StreamRefusalRecorder = (lane: string) => void;

/** Every call's stream, refused or not: the process's call rate (docs/adr/035-garbage-collection-under-load.md). */
export class StreamCounter {
  count = 0;
}

/**
 * Admission before grpc-js (docs/adr/030-admission-control.md, "Refusing at
 * the stream"): a read whose headers name its tenant (TENANT_METADATA_KEY;
 * a header naming another tenant than the request only gets its own call
 * refused early, as that tenant's would be), arriving when its lane would
 * refuse it at once (no slot, the queue full, no fairer place to take), is
 * answered RESOURCE_EXHAUSTED with its pushback, trailers only, from the
 * HTTP/2 stream's headers, before grpc-js makes a call of it: about half
 * of what a refusal costs through grpc-js's call and the interceptors
 * (`npm run bench:refusal-cost`). Every other stream goes on to grpc-js as
 * before. Returns how many HTTP/2 servers it guards (0: this grpc-js keeps
 * them elsewhere, and every refusal goes through the interceptor).
 */
export function refuseAtTheStream(
  server: Server,
  admission: ReadAdmission,
  recorder?: StreamRefusalRecorder,
  streams?: StreamCounter,
): number {
  const servers = http2ServersOf(server);
  for (const http2Server of servers) {
    const listeners = http2Server.listeners('stream') as StreamListener[];
    http2Server.removeAllListeners('stream');
    http2Server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => {
      if (streams) streams.count += 1;
      if (!refused(stream, headers, admission, recorder))
        for (const listener of listeners) listener.call(http2Server, stream, headers, ...rest);
    });
  }
  return servers.length;
}

function refused(
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  admission: ReadAdmission,
  recorder?: StreamRefusalRecorder,
): boolean {
  const lane = ADMITTED_METHODS.get(headers[':path'] ?? '');
  const tenant = headers[TENANT_METADATA_KEY];
  if (lane === undefined || typeof tenant !== 'string' || tenant === '') return false;
  // The same key the interceptor takes from the request's tenant_id.
  const refusal = admission.lanes[lane].refuseEarly(tenant.slice(0, MAX_TENANT_KEY));
  if (refusal === undefined) return false;
  recorder?.(lane);
  // The request's body is not read: what the caller still sends is discarded with the stream.
  stream.on('error', () => undefined);
  stream.resume();
  stream.respond(
    {
      ':status': 200,
      'content-type': 'application/grpc+proto',
      'grpc-status': String(status.RESOURCE_EXHAUSTED),
      'grpc-message': encodeURI(refusalDetails(lane, refusal)),
      [RETRY_PUSHBACK_KEY]: String(refusal.retryAfterMs),
    },
    { endStream: true },
  );
  return true;
}

/** grpc-js's HTTP/2 servers (bound by then), which it keeps in a private map. */
function http2ServersOf(server: Server): AnyHttp2Server[] {
  const kept = (server as unknown as { http2Servers?: unknown }).http2Servers;
  return kept instanceof Map ? ([...kept.keys()] as AnyHttp2Server[]) : [];
}
