import { createServer, Server, Socket } from 'node:net';

/**
 * A loopback TCP proxy the tests can cut, to give the service a real
 * database outage without touching the database server itself.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly pairs = new Set<[Socket, Socket]>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = this.port): Promise<number> {
    const server = createServer((client) => {
      const upstream = new Socket();
      this.track(client);
      this.track(upstream);
      upstream.connect(this.targetPort, this.targetHost);
      client.pipe(upstream).pipe(client);
      const pair: [Socket, Socket] = [client, upstream];
      this.pairs.add(pair);
      const close = () => {
        this.pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  /** Refuses new connections and drops the open ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Leaves the open connections open but passes nothing more on them, as a
   * network that drops packets does: neither end hears of it. New
   * connections work.
   */
  stall(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
    this.pairs.clear();
  }

  /** Accepts connections again on the same port. */
  async restore(): Promise<void> {
    await this.start(this.port);
  }

  private track(socket: Socket) {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }
}
