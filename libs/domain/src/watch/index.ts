export * from './conversation-watch';
export * from './shared-reads';
