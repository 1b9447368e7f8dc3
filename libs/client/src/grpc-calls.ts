import {
  type CallOptions,
  type ChannelCredentials,
  type ClientReadableStream,
  credentials,
  Metadata,
  type ServiceError,
  status as GrpcStatus,
} from '@grpc/grpc-js';
import type { ToolHistoryClientOptions, TokenSource } from './tool-history-requests';
import { ToolHistoryError } from './tool-history-errors';

/*
 * How the ToolHistory client talks to the service, apart from what it asks:
 * the channel's credentials, the bearer token on every call, a deadline that
 * covers fetching the token, and a server stream that ends quietly when its
 * consumer stops or its signal aborts.
 */

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => { cancel(): void };

/** The call's headers: the bearer token, fetched for every call (a function may refresh it). */
export async function metadataOf(token: TokenSource | undefined): Promise<Metadata> {
  const metadata = new Metadata();
  if (token !== undefined) metadata.set('authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
  return metadata;
}

/** The call's headers, or DEADLINE_EXCEEDED / CANCELLED when the deadline passes or the signal aborts while the token is fetched. */
export function metadataBefore(
  token: TokenSource | undefined,
  deadline: Date,
  signal: AbortSignal | undefined,
  method: string,
): Promise<Metadata> {
  const cancelled = () => new ToolHistoryError(GrpcStatus.CANCELLED, 'cancelled by the caller', method, { cause: signal?.reason });
  if (signal?.aborted) return Promise.reject(cancelled());
  return new Promise<Metadata>((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const onAbort = () => settle(() => reject(cancelled()));
    const timer = setTimeout(
      () =>
        settle(() => reject(new ToolHistoryError(GrpcStatus.DEADLINE_EXCEEDED, 'the token was not fetched before the deadline', method))),
      Math.max(0, deadline.getTime() - Date.now()),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
    metadataOf(token).then(
      (metadata) => settle(() => resolve(metadata)),
      (error: unknown) => settle(() => reject(error)),
    );
  });
}

/**
 * A server stream's messages, for as long as the consumer iterates: the
 * signal cancels it (and the stream then just ends), a failure is a
 * ToolHistoryError of `method`, and a consumer that stops early (break,
 * return, throw) ends the server stream.
 */
export async function* streamed<T>(
  call: ClientReadableStream<T>,
  signal: AbortSignal | undefined,
  method: string,
): AsyncGenerator<T, void, undefined> {
  let cancelledHere = false;
  const cancel = () => {
    cancelledHere = true;
    call.cancel();
  };
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    yield* call as AsyncIterable<T>;
  } catch (error) {
    if (cancelledHere && signal?.aborted) return;
    throw isServiceError(error) ? ToolHistoryError.fromServiceError(method, error) : error;
  } finally {
    signal?.removeEventListener('abort', cancel);
    // Its CANCELLED status is expected now.
    call.on('error', () => undefined);
    cancel();
  }
}

export function channelCredentials(tls: ToolHistoryClientOptions['tls']): ChannelCredentials {
  if (tls === undefined) return credentials.createInsecure();
  if (tls === true) return credentials.createSsl();
  const buffer = (value: Buffer | string | undefined) => (value === undefined ? null : Buffer.from(value));
  return credentials.createSsl(buffer(tls.ca), buffer(tls.key), buffer(tls.cert));
}

function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === 'number' && 'metadata' in error;
}

/** host:port names this machine: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(address: string): boolean {
  const host = address
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
