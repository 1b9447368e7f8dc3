import type { ClientBase } from 'pg';
import type { ConversationChanges, ConversationChangeWatcher, ConversationKey, ProgressNotice } from '@toolhistory/domain';
import type { DatabaseSettings } from './database';
import { PostgresChannelListener, type ChannelListenerOptions } from './postgres-channel-listener';

export const CONVERSATIONS_CHANGED_CHANNEL = 'toolhistory_conversations_changed';

/** PostgreSQL refuses a payload of 8,000 bytes or more; the schema name and the wrapping take the rest. */
const MAX_KEYS_BYTES = 7_000;

interface ChangeNotice {
  schema: string;
  keys?: Array<[string, string]>;
  all?: true;
  progress?: {
    /** [consumer group, topic, partition, next offset, last global position or null] */
    recorded?: [string, string, number, string, string | null];
    /** [projection, position] */
    checkpoint?: [string, string];
  };
}

/** A progress notice as sent by notifyRecordingProgress; one that cannot be read is dropped (waiters read the database). */
function deliverProgress(progress: NonNullable<ChangeNotice['progress']>, watcher: ConversationChangeWatcher): void {
  try {
    if (Array.isArray(progress.recorded)) {
      const [consumerGroup, topic, partition, nextOffset, position] = progress.recorded;
      watcher.progressed?.({
        kind: 'recorded',
        consumerGroup,
        topic,
        partition,
        nextOffset: BigInt(nextOffset),
        ...(position === null ? {} : { position: BigInt(position) }),
      });
    } else if (Array.isArray(progress.checkpoint)) {
      const [projection, position] = progress.checkpoint;
      watcher.progressed?.({ kind: 'checkpoint', projection, position: BigInt(position) });
    }
  } catch {
    // Not a notice of this version: nothing is lost, a waiter that hears nothing reads the database.
  }
}

/**
 * Tells every listening process, at commit, that these conversations'
 * read-model rows changed. In the writer's transaction, so a rolled-back
 * change notifies nobody; one statement, however many notices it takes.
 */
export async function notifyConversationsChanged(client: ClientBase, keys: readonly ConversationKey[]): Promise<void> {
  if (keys.length === 0) return;
  const chunks: string[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  for (const key of keys) {
    const entry = JSON.stringify([key.tenantId, key.conversationId]);
    const entryBytes = Buffer.byteLength(entry) + 1;
    if (chunk.length > 0 && bytes + entryBytes > MAX_KEYS_BYTES) {
      chunks.push(`[${chunk.join(',')}]`);
      chunk = [];
      bytes = 0;
    }
    chunk.push(entry);
    bytes += entryBytes;
  }
  chunks.push(`[${chunk.join(',')}]`);
  await client.query(
    `SELECT pg_notify('${CONVERSATIONS_CHANGED_CHANNEL}', json_build_object('schema', current_schema(), 'keys', k::json)::text)
     FROM unnest($1::text[]) AS k`,
    [chunks],
  );
}

/**
 * Tells every listening process, at commit, that recording or a projection
 * moved on: on the same channel as the changes, after them, so a process
 * that hears it has heard every change it committed with (what a reader
 * waiting for its consistency token relies on).
 */
export async function notifyRecordingProgress(client: ClientBase, notice: ProgressNotice): Promise<void> {
  const body =
    notice.kind === 'recorded'
      ? {
          recorded: [
            notice.consumerGroup,
            notice.topic,
            notice.partition,
            notice.nextOffset.toString(),
            notice.position === undefined ? null : notice.position.toString(),
          ],
        }
      : { checkpoint: [notice.projection, notice.position.toString()] };
  await client.query(
    `SELECT pg_notify('${CONVERSATIONS_CHANGED_CHANNEL}', json_build_object('schema', current_schema(), 'progress', $1::json)::text)`,
    [JSON.stringify(body)],
  );
}

/** Tells every listening process that any conversation may have changed: the read model was swapped for a rebuilt one. */
export async function notifyEveryConversationChanged(client: ClientBase): Promise<void> {
  await client.query(
    `SELECT pg_notify('${CONVERSATIONS_CHANGED_CHANNEL}', json_build_object('schema', current_schema(), 'all', true)::text)`,
  );
}

/**
 * The change feed of one schema's read model, over LISTEN/NOTIFY. It is
 * `current` only while its connection listens and answers its heartbeat;
 * a notice it cannot read makes it report every conversation changed.
 */
export class PostgresConversationChanges implements ConversationChanges {
  private listener: PostgresChannelListener | null = null;

  constructor(
    private readonly settings: DatabaseSettings,
    private readonly onLost: (error: Error) => void = () => undefined,
    private readonly options: ChannelListenerOptions = {},
  ) {}

  watch(watcher: ConversationChangeWatcher): void {
    if (this.listener) throw new Error('the conversation change feed already has a watcher');
    this.listener = new PostgresChannelListener(
      this.settings,
      CONVERSATIONS_CHANGED_CHANNEL,
      {
        notification: (payload) => this.deliver(payload, watcher),
        listening: () => watcher.current(),
        lost: (error) => {
          watcher.stale();
          this.onLost(error);
        },
      },
      this.options,
    );
    this.listener.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  private deliver(payload: string, watcher: ConversationChangeWatcher): void {
    let notice: ChangeNotice;
    try {
      notice = JSON.parse(payload) as ChangeNotice;
    } catch {
      return watcher.changedAll();
    }
    if (notice.schema !== this.settings.schema) return;
    if (notice.progress !== undefined) return deliverProgress(notice.progress, watcher);
    if (notice.all === true || !Array.isArray(notice.keys)) return watcher.changedAll();
    watcher.changed(notice.keys.map(([tenantId, conversationId]) => ({ tenantId, conversationId })));
  }
}
