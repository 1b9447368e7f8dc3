export * from './detectors';
export * from './redact-text';
export * from './json-path';
export * from './redact-payload';
