import { ToolEventPublisher, ToolHistoryClient } from '../../libs/client/src';
import { RunningStack, StackOptions, startRunningStack } from './running-stack';

/** A policy that keeps every result fresh for an hour, so a test's replays never depend on its pace. */
export const HOUR_LONG_FRESHNESS: StackOptions = { policy: { defaults: { freshnessSeconds: 3600 } } };

/** The running service with the client package's publisher (connected) and gRPC client pointed at it, as an agent worker has them. */
export interface ClientStack {
  stack: RunningStack;
  publisher: ToolEventPublisher;
  client: ToolHistoryClient;
}

export async function startClientStack(prefix: string, options: StackOptions = {}): Promise<ClientStack> {
  const stack = await startRunningStack(prefix, options);
  const publisher = new ToolEventPublisher({ brokers: stack.brokers, topic: stack.topic });
  await publisher.connect();
  return { stack, publisher, client: new ToolHistoryClient({ address: stack.address }) };
}

/** Closes what startClientStack opened; tolerates a start that failed half way. */
export async function stopClientStack(parts: Partial<ClientStack>): Promise<void> {
  parts.client?.close();
  await parts.publisher?.disconnect();
  await parts.stack?.stop();
}
