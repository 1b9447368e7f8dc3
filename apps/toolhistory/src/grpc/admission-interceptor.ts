import { ResponderBuilder, ServerInterceptingCall, ServerListenerBuilder, type ServerInterceptor, status } from '@grpc/grpc-js';
import type { AdmissionRefusal, AdmissionTicket } from '../admission/admission-limiter';
import type { AdmissionLane, ReadAdmission } from '../admission/read-admission';
import { pushbackMetadata } from './grpc-status';

const SERVICE = '/toolhistory.v1.ToolHistory/';

/**
 * The unary reads admitted here, by lane. WatchConversation's snapshot is
 * admitted by its controller (the stream outlives it); EraseConversation is
 * a write and SubscribeToolEvents is bounded by the open streams per tenant.
 */
export const ADMITTED_METHODS: ReadonlyMap<string, AdmissionLane> = new Map([
  [`${SERVICE}GetReplayHistory`, 'replay'],
  [`${SERVICE}ListToolInvocations`, 'audit'],
  [`${SERVICE}SearchToolHistory`, 'audit'],
  [`${SERVICE}GetUsage`, 'audit'],
]);

/** Longer tenant ids than any event can carry are the caller check's to refuse; here they are only cut for the key. */
export const MAX_TENANT_KEY = 256;

const REFUSAL_TEXT: Record<AdmissionRefusal['reason'], string> = {
  full: 'no free slot and no room to wait',
  waited: 'no slot freed in the time a call may wait',
  shed: 'its place in the queue went to a tenant with fewer calls waiting',
};

export function refusalDetails(lane: AdmissionLane, refusal: AdmissionRefusal): string {
  return `server busy (${lane} reads): ${REFUSAL_TEXT[refusal.reason]}; retry after ${refusal.retryAfterMs} ms`;
}

/**
 * Admission control at the very edge (docs/adr/030-admission-control.md): a
 * read's request is held once it is complete (its message received and the
 * caller's half-close) until its lane admits it, or the call is answered
 * RESOURCE_EXHAUSTED with `grpc-retry-pushback-ms`, before NestJS, the
 * caller check or any work sees it. A request still arriving holds no slot,
 * so a caller that never finishes sending cannot keep one. The slot is held
 * until the handler hands over the status (grpc-js writes the answer's bytes
 * after that, as the caller's window allows); a call whose caller goes away (cancel,
 * deadline) while it waits is dropped unseen. Fairness is by the tenant the
 * request names; the caller check still refuses a tenant the caller may not
 * use.
 */
export function admissionInterceptor(admission: ReadAdmission): ServerInterceptor {
  return (method, call) => {
    const lane = ADMITTED_METHODS.get(method.path);
    if (lane === undefined) return new ServerInterceptingCall(call);
    const limiter = admission.lanes[lane];
    let tenant = '';
    let ticket: AdmissionTicket | undefined;
    const end = () => ticket?.end();
    const intercepting: ServerInterceptingCall = new ServerInterceptingCall(
      call,
      new ResponderBuilder()
        .withStart((next) =>
          next(
            new ServerListenerBuilder()
              .withOnReceiveMessage((message: { tenant_id?: unknown } | null, passOn) => {
                if (typeof message?.tenant_id === 'string') tenant = message.tenant_id.slice(0, MAX_TENANT_KEY);
                passOn(message);
              })
              .withOnReceiveHalfClose((passOn) => {
                ticket = limiter.request(tenant, {
                  admitted: passOn,
                  refused: (refusal) =>
                    intercepting.sendStatus({
                      code: status.RESOURCE_EXHAUSTED,
                      details: refusalDetails(lane, refusal),
                      metadata: pushbackMetadata(refusal.retryAfterMs),
                    }),
                });
              })
              .withOnCancel(end)
              .build(),
          ),
        )
        .withSendStatus((sent, next) => {
          end();
          next(sent);
        })
        .build(),
    );
    return intercepting;
  };
}
