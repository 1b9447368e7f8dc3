export * from './tool-history-policy';
export * from './policy-vocabulary';
