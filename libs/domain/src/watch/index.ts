export * from './conversation-watch';
