export * from './kafka-client';
export * from './ensure-topics';
export * from './kafka-dead-letter-sink';
export * from './broker-access';
export * from './kafka-dead-letter-topic';
export * from './partitioned-consumer.port';
export * from './kafka-messaging';
