export * from './recorded-summary';
