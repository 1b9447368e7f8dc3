export * from './kafka-client';
export * from './ensure-topics';
export * from './kafka-dead-letter-sink';
export * from './broker-access';
export * from './kafka-dead-letter-topic';
