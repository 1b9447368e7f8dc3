export * from './sealed-payloads';
export * from './invocation-seals';
export * from './opened-event-store';
