/** The call rules' tables of cases share these: a call every rule keeps, and the verdicts they give. */
import type { InvocationRow } from '../projection/read-model.types';
import {
  type CallContext,
  type CallVerdict,
  deniedCallNotice,
  INTERRUPTED_CALL_NOTICE,
  invalidatedResultNotice,
} from './replay-call-rules';
import { answeredRow, T0 } from './replay-test-support.fixture';
/** An answered get_order call, result recorded at T0 + 1 s. */
export const ROW = answeredRow();
export const COMPLETED_AT = T0 + 1_000;

/** A call every rule keeps: answered, in a completed run's sent round, fully persisted, fresh (60 s of 300 s). */
export function callWith(fields: Partial<Omit<CallContext, 'row'>> & { row?: Partial<InvocationRow> } = {}): CallContext {
  const { row, ...rest } = fields;
  return {
    row: { ...ROW, ...row },
    toolCallId: 'call_get',
    toolName: 'get_order',
    hasCall: true,
    hasResult: true,
    runStatus: 'completed',
    offBranch: false,
    visibility: 'per_run',
    late: false,
    inUnsentLastRound: false,
    persistToday: 'full',
    staleResults: 'drop',
    freshnessWindowSeconds: 300,
    asOf: COMPLETED_AT + 60_000,
    approval: 'none',
    sideEffects: false,
    settled: true,
    ...rest,
  };
}

export interface Case {
  name: string;
  call: CallContext;
  verdict: CallVerdict;
}

export const KEPT: CallVerdict = { kind: 'kept' };
export const omitted = (reason: Extract<CallVerdict, { kind: 'omitted' }>['reason']): CallVerdict => ({ kind: 'omitted', reason });
export const CANCEL = { toolName: 'cancel_order', toolCallId: 'call_cancel' };
export const INVALIDATED_NOTICE = invalidatedResultNotice('get_order', 'cancel_order', 'call_cancel');

export const DENIED_NOTICE = deniedCallNotice('get_order', 'over the limit');
export const DENIED: CallVerdict = { kind: 'notice', notice: DENIED_NOTICE, expired: false, isError: true };
export const INTERRUPTED: CallVerdict = {
  kind: 'notice',
  notice: INTERRUPTED_CALL_NOTICE,
  expired: false,
  isError: true,
  interrupted: true,
};
export const DENIED_ROW = { approvalDecisionReason: 'over the limit' };
