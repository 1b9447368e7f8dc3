export * from './invocation-listing';
export * from './usage-report';
export * from './search-request';
export * from './search-snippet';
export * from './conversation-timeline';
