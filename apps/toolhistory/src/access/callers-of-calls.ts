import type { Metadata } from '@grpc/grpc-js';
import type { Request } from 'express';
import type { Caller } from '@toolhistory/domain';

/**
 * The verified caller of each call, set by the CallerGuard before the
 * handler runs and read by handlers that record who acted (erasure) or
 * say who is asking (the console). Kept on the call's metadata object, or
 * the HTTP request, so it goes when the call does: a property, not a
 * WeakMap entry, because every call sets it and few read it, and a
 * WeakMap's table of a few thousand calls a second is rehashed as it grows
 * and walked by every garbage collection.
 */
const CALLER = Symbol('toolhistory.verifiedCaller');
type HoldsCaller = { [CALLER]?: Caller };

export const rememberCaller = (metadata: Metadata, caller: Caller): void => void ((metadata as unknown as HoldsCaller)[CALLER] = caller);
export const rememberHttpCaller = (request: Request, caller: Caller): void => void ((request as unknown as HoldsCaller)[CALLER] = caller);

export function callerOf(call: Metadata | Request): Caller {
  const caller = (call as unknown as HoldsCaller)[CALLER];
  // The guard runs before every handler; a handler without a caller is a wiring fault, not a caller's mistake.
  if (!caller) throw new Error('no verified caller for this call: is the CallerGuard installed?');
  return caller;
}
