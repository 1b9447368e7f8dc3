export * from './invocation-listing';
export * from './usage-report';
