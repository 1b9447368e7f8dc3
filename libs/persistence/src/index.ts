export * from './database';
export * from './postgres-errors';
export * from './run-migrations';
export * from './postgres-recording-store';
export * from './postgres-replay-reader';
export * from './postgres-conversation-eraser';
export * from './in-transaction';
export * from './postgres-audit-reader';
