export * from './detectors';
export * from './redact-text';
export * from './json-path';
export * from './redact-payload';
export * from './redaction-policy';
export * from './redact-event';
export * from './redact-dead-letter';
export * from './tool-names';
