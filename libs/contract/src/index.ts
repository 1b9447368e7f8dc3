export * from './tool-event.types';
export * from './tool-event.classes';
export * from './parse-tool-event';
export * from './upcast-tool-event';
export * from './json-depth';
export * from './truncation-marker';
export * from './consistency-token';
export * from './history-formats';
