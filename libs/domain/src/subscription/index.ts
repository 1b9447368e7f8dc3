export * from './subscription-request';
