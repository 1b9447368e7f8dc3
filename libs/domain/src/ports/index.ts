export * from './recording-store.port';
export * from './dead-letter-sink.port';
