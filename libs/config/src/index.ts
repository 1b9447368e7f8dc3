export * from './load-config';
export * from './environment-variables';
export * from './secret';
export * from './security-config';
export type { ReadConfigFile } from './config-files';
