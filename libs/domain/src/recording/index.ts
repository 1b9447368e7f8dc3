export * from './recorded-summary';
export * from './partition-offset';
export * from './record-batch';
export * from './grouped-recording';
