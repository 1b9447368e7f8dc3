export * from './app-error';
export * from './require-arguments';
