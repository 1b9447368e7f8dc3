export * from './recorded-summary';
export * from './partition-offset';
