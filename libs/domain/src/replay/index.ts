export * from './replay-policy';
export * from './replayed-tool-call-id';
export * from './provider-messages';
export * from './replay-history';
export * from './replay-validity';
