export * from './access-rules';
