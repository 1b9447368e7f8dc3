export * from './eventstoredb-event-store';
export * from './eventstoredb-errors';
export * from './eventstoredb-mapping';
export * from './event-store-recording-storage';
