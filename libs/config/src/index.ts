export * from './load-config';
export * from './environment-variables';
