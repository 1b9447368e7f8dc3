import type { Kafka } from 'kafkajs';
import { AppError, ErrorCode } from '@toolhistory/errors';
import { errorChain } from './error-chain';
import type { KafkaClientSettings } from './kafka-client';

/** TLS verification failures of Node's tls module: the broker's certificate is not trusted as configured. */
const UNTRUSTED_CERTIFICATE =
  /SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_HAS_EXPIRED|ERR_TLS_CERT_ALTNAME_INVALID|self[- ]signed certificate|unable to verify|altnames/i;

/**
 * Connects once and asks the cluster who it is, so wrong credentials or an
 * untrusted broker certificate stop start-up with a message saying which
 * setting to fix (INVALID_CONFIG). A broker that does not answer is
 * BROKER_UNAVAILABLE (retriable): the service starts and waits for it.
 */
export async function verifyBrokerAccess(kafka: Kafka, settings: Pick<KafkaClientSettings, 'sasl' | 'ssl'>): Promise<void> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeCluster();
  } catch (error) {
    throw brokerAccessError(error, settings);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

export function brokerAccessError(error: unknown, settings: Pick<KafkaClientSettings, 'sasl' | 'ssl'>): AppError {
  const chain = errorChain(error);
  if (chain.some((e) => e.name === 'KafkaJSSASLAuthenticationError')) {
    const who = settings.sasl
      ? `user ${JSON.stringify(settings.sasl.username)} with ${settings.sasl.mechanism.toUpperCase()}`
      : 'this client';
    return new AppError(
      ErrorCode.InvalidConfig,
      `Kafka refused the credentials of ${who}: check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)`,
      { cause: error },
    );
  }
  const untrusted = chain.find((e) => UNTRUSTED_CERTIFICATE.test(`${e.code ?? ''} ${e.message}`));
  if (untrusted) {
    return new AppError(
      ErrorCode.InvalidConfig,
      `the Kafka broker's TLS certificate is not trusted (${untrusted.code ?? untrusted.message}): set KAFKA_SSL_CA_FILE to the CA that signed it`,
      { cause: error },
    );
  }
  const first = chain[0];
  return new AppError(ErrorCode.BrokerUnavailable, `Kafka does not answer: ${first?.message ?? String(error)}`, {
    cause: error,
  });
}
