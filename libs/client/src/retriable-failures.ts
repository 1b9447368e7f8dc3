/**
 * The failures worth trying again with the same request (the service, the
 * broker or the network was briefly unable, the request itself was fine):
 * the one table every error of the package takes `retriable` from, by the
 * gRPC status of a failed call or the code of a failed publication.
 */
const RETRIABLE: ReadonlySet<string> = new Set([
  // gRPC statuses, by name.
  'UNAVAILABLE',
  'DEADLINE_EXCEEDED',
  'RESOURCE_EXHAUSTED',
  'ABORTED',
  // Kafka's own error codes, by name (a broker that is moving a partition, short of replicas, or slow).
  'REQUEST_TIMED_OUT',
  'NETWORK_EXCEPTION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'UNKNOWN_TOPIC_OR_PARTITION',
  // kafkajs's transport failures, by class (the broker could not be reached, or did not answer in time).
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
]);

/** Whether a failure of this gRPC status or publication code may pass when tried again. */
export function isRetriable(statusOrCode: string): boolean {
  return RETRIABLE.has(statusOrCode);
}
