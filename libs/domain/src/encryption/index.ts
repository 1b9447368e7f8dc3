export * from './sealed-payloads';
export * from './invocation-seals';
