export * from './app-error';
export * from './connection-errors';
export * from './error-codes';
export * from './require-arguments';
