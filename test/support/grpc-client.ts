import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import { createServer } from 'node:net';
import { findProjectFile } from '../../apps/toolhistory/src/find-project-file';
import type {
  EraseConversationRequest,
  EraseConversationResponse,
  ForkConversationRequest,
  ForkConversationResponse,
  GetReplayHistoryRequest,
  GetReplayHistoryResponse,
  GetUsageRequest,
  GetUsageResponse,
  ListToolInvocationsRequest,
  ListToolInvocationsResponse,
  RecordedEvent,
  SearchToolHistoryRequest,
  SearchToolHistoryResponse,
  SubscribeToolEventsRequest,
  ConversationChange,
  WatchConversationRequest,
} from '../../libs/grpc-api/src';

const PROTO = findProjectFile('proto/toolhistory/v1/toolhistory.proto', __dirname);

export interface CallOptions {
  deadline?: Date;
  /** Headers for this call; replaces the client's token header. */
  metadata?: grpc.Metadata;
}

type Unary<Req, Res> = (request: Req, options?: CallOptions) => Promise<Res>;

export interface ClientOptions {
  /** TLS: trust `ca`; present `cert`/`key` as a client certificate (mTLS). Default: plaintext. */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** Sent as `authorization: Bearer <token>` on every ToolHistory call. */
  token?: string;
  host?: string;
}

/**
 * A response as proto-loader decodes it with `defaults: true`: every scalar
 * and list present. (Message fields may still be null when unset.)
 */
export type Decoded<T> = T extends string | number | boolean
  ? T
  : T extends ReadonlyArray<infer E>
    ? Decoded<E>[]
    : T extends object
      ? { [K in keyof T]-?: Decoded<NonNullable<T[K]>> }
      : T;

export interface ToolHistoryTestClient {
  getReplayHistory: Unary<GetReplayHistoryRequest, ReplayResponse>;
  listToolInvocations: Unary<ListToolInvocationsRequest, Decoded<ListToolInvocationsResponse>>;
  getUsage: Unary<GetUsageRequest, Decoded<GetUsageResponse>>;
  searchToolHistory: Unary<SearchToolHistoryRequest, Decoded<SearchToolHistoryResponse>>;
  eraseConversation: Unary<EraseConversationRequest, Decoded<EraseConversationResponse>>;
  forkConversation: Unary<ForkConversationRequest, Decoded<ForkConversationResponse>>;
  /** A server stream of RecordedEvent messages; cancel() disconnects. */
  subscribeToolEvents: (request: SubscribeToolEventsRequest, options?: CallOptions) => grpc.ClientReadableStream<RecordedEventMessage>;
  /** A server stream of ConversationChange messages: the snapshot, then changes; cancel() disconnects. */
  watchConversation: (request: WatchConversationRequest, options?: CallOptions) => grpc.ClientReadableStream<ConversationChangeMessage>;
  healthCheck: (service?: string) => Promise<string>;
  close(): void;
}

export type ConversationChangeMessage = Decoded<ConversationChange> & { change: 'snapshot' | 'invocation_changed' | 'run_ended' };

export type RecordedEventMessage = Decoded<RecordedEvent>;
export type ReplayResponse = Decoded<GetReplayHistoryResponse>;

function promisify<Req, Res>(client: grpc.Client, method: string, headers: () => grpc.Metadata): Unary<Req, Res> {
  return (request, options = {}) =>
    new Promise((resolveCall, reject) => {
      (client as unknown as Record<string, (...args: unknown[]) => void>)[method](
        request,
        options.metadata ?? headers(),
        { deadline: options.deadline },
        (error: grpc.ServiceError | null, response: Res) => (error ? reject(error) : resolveCall(response)),
      );
    });
}

function channelCredentials(options: ClientOptions): grpc.ChannelCredentials {
  return options.tls
    ? grpc.credentials.createSsl(options.tls.ca, options.tls.key ?? null, options.tls.cert ?? null)
    : grpc.credentials.createInsecure();
}

export function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

/** A client as an agent worker would write one: the published proto, @grpc/grpc-js, nothing of the service's code. */
export function toolHistoryClient(port: number, options: ClientOptions = {}): ToolHistoryTestClient {
  const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    toolhistory: { v1: { ToolHistory: grpc.ServiceClientConstructor } };
  };
  const address = `${options.host ?? '127.0.0.1'}:${port}`;
  const credentials = channelCredentials(options);
  const client = new loaded.toolhistory.v1.ToolHistory(address, credentials);
  const Health = grpc.makeClientConstructor(healthService as unknown as grpc.ServiceDefinition, 'Health');
  const health = new Health(address, credentials);
  const headers = () => (options.token === undefined ? new grpc.Metadata() : bearer(options.token));
  const check = promisify<{ service: string }, { status: string | number }>(health, 'check', () => new grpc.Metadata());
  return {
    getReplayHistory: promisify(client, 'GetReplayHistory', headers),
    eraseConversation: promisify(client, 'EraseConversation', headers),
    forkConversation: promisify(client, 'ForkConversation', headers),
    listToolInvocations: promisify(client, 'ListToolInvocations', headers),
    searchToolHistory: promisify(client, 'SearchToolHistory', headers),
    getUsage: promisify(client, 'GetUsage', headers),
    subscribeToolEvents: (request, callOptions = {}) =>
      (
        client as unknown as { SubscribeToolEvents: (r: unknown, m: grpc.Metadata) => grpc.ClientReadableStream<RecordedEventMessage> }
      ).SubscribeToolEvents(request, callOptions.metadata ?? headers()),
    watchConversation: (request, callOptions = {}) =>
      (
        client as unknown as {
          WatchConversation: (r: unknown, m: grpc.Metadata) => grpc.ClientReadableStream<ConversationChangeMessage>;
        }
      ).WatchConversation(request, callOptions.metadata ?? headers()),
    healthCheck: async (service = '') => String((await check({ service }, { deadline: new Date(Date.now() + 2_000) })).status),
    close() {
      client.close();
      health.close();
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/** The services a server names through gRPC server reflection (v1), as grpcurl asks for them. */
export function listServicesByReflection(port: number, options: ClientOptions = {}): Promise<string[]> {
  const definition = protoLoader.loadSync(require.resolve('@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto'), {
    keepCase: true,
    defaults: true,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
  };
  const client = new loaded.grpc.reflection.v1.ServerReflection(`${options.host ?? '127.0.0.1'}:${port}`, channelCredentials(options));
  const metadata = options.token === undefined ? new grpc.Metadata() : bearer(options.token);
  return new Promise<string[]>((resolve, reject) => {
    const call = (
      client as unknown as { ServerReflectionInfo: (m: grpc.Metadata) => grpc.ClientDuplexStream<unknown, unknown> }
    ).ServerReflectionInfo(metadata);
    call.on('data', (response: { list_services_response?: { service: Array<{ name: string }> } }) => {
      resolve((response.list_services_response?.service ?? []).map((s) => s.name));
      call.end();
    });
    call.on('error', (error) => {
      client.close();
      reject(error);
    });
    call.on('end', () => client.close());
    call.write({ list_services: '' });
  });
}
