export * from './choose-database';
export * from './embedded-binaries';
export * from './embedded-postgres';
export * from './open-local-database';
export * from './probe-local-postgres';
export * from './local-settings';
