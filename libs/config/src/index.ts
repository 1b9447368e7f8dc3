export * from './load-config';
export * from './settings';
export * from './read-settings';
export * from './secret';
export * from './security-config';
export * from './encryption-config';
export type { Parsed, Parser } from './parsers';
export type { ReadConfigFile } from './config-files';
