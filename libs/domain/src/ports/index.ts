export * from './recording-store.port';
export * from './dead-letter-sink.port';
export * from './replay-reader.port';
export * from './conversation-eraser.port';
export * from './audit-reader.port';
export * from './event-store.port';
export * from './read-model-rebuild.port';
export * from './checkpointed-projection.port';
