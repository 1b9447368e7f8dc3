export * from './recording-progress';
export * from './token-satisfaction';
