export * from './read-model.types';
export * from './read-model-keys';
export * from './evolve-read-model';
export * from './recorded-result';
export * from './invocation-tokens';
export * from './cross-run-pairing';
export * from './approval-state';
