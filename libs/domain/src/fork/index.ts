export * from './plan-fork';
