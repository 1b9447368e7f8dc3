import { Metadata } from '@grpc/grpc-js';
import type { Request } from 'express';
import type { Caller } from '@toolhistory/domain';
import { callerOf, rememberCaller, rememberHttpCaller } from './callers-of-calls';

const caller = (subject: string): Caller => ({ subject, tenants: new Set(['acme']), scopes: new Set() });

describe('the verified caller of a call', () => {
  it.each([
    ['a gRPC call', () => new Metadata(), (call: Metadata, who: Caller) => rememberCaller(call, who)],
    ['an HTTP request', () => ({}) as Request, (call: Request, who: Caller) => rememberHttpCaller(call, who)],
  ] as const)('is the one remembered for %s, and no other call has it', (_, newCall, remember) => {
    const [first, second] = [newCall(), newCall()];
    const [alice, bob] = [caller('alice'), caller('bob')];
    (remember as (call: unknown, who: Caller) => void)(first, alice);
    (remember as (call: unknown, who: Caller) => void)(second, bob);
    expect(callerOf(first as Metadata)).toBe(alice);
    expect(callerOf(second as Metadata)).toBe(bob);
    expect(() => callerOf(newCall() as Metadata)).toThrow('no verified caller for this call');
  });

  it('does not travel with the metadata a call sends on', () => {
    const metadata = new Metadata();
    metadata.set('x-request-id', 'r-1');
    rememberCaller(metadata, caller('alice'));
    expect(metadata.getMap()).toEqual({ 'x-request-id': 'r-1' });
    expect(() => callerOf(metadata.clone())).toThrow('no verified caller for this call');
  });
});
