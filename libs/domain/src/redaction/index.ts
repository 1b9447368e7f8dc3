export * from './detectors';
export * from './redact-text';
