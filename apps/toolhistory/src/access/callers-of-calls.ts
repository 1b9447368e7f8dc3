import type { Metadata } from '@grpc/grpc-js';
import type { Request } from 'express';
import type { Caller } from '@toolhistory/domain';

/**
 * The verified caller of each call, set by the CallerGuard before the
 * handler runs and read by handlers that record who acted (erasure) or
 * say who is asking (the console). Keyed by the call's metadata object, or
 * the HTTP request, so it goes when the call does.
 */
const callers = new WeakMap<Metadata | Request, Caller>();

export const rememberCaller = (metadata: Metadata, caller: Caller): void => void callers.set(metadata, caller);
export const rememberHttpCaller = (request: Request, caller: Caller): void => void callers.set(request, caller);

export function callerOf(call: Metadata | Request): Caller {
  const caller = callers.get(call);
  // The guard runs before every handler; a handler without a caller is a wiring fault, not a caller's mistake.
  if (!caller) throw new Error('no verified caller for this call: is the CallerGuard installed?');
  return caller;
}
