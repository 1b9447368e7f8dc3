export * from './stored-dead-letter';
