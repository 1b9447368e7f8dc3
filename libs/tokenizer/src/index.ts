export * from './o200k-token-counter';
