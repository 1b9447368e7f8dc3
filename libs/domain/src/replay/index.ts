export * from './replay-policy';
export * from './replayed-tool-call-id';
export * from './provider-messages';
export * from './replay-history';
export * from './replay-validity';
export { CALL_RULES, isResultExpired, resultExpiresAt, verdictOf } from './replay-call-rules';
export type { CallContext, CallOmissionReason, CallRule, CallVerdict } from './replay-call-rules';
export * from './round-responses';
