import type { Pool } from 'pg';
import type { AppConfig } from '@toolhistory/config';
import type { ConversationEraser, EventStore } from '@toolhistory/domain';
import { PostgresConversationEraser } from '@toolhistory/persistence';
import { o200kTokens } from '@toolhistory/tokenizer';
import type { Encryption } from '../encryption/open-encryption';
import { CryptoShreddingEraser } from './crypto-shredding-eraser';
import { EventStoreConversationEraser } from './event-store-conversation-eraser';

/**
 * Erasure as configured, for the RPC and the CLI alike: the event store
 * (PostgreSQL, or EventStoreDB with the read model beside it), then, with
 * encryption at rest, the conversation's data keys.
 */
export function conversationEraser(pool: Pool, config: AppConfig, events: EventStore, encryption: Encryption | null): ConversationEraser {
  const readModel = new PostgresConversationEraser(pool, o200kTokens, encryption?.vault ?? null);
  const stores = config.eventStore.kind === 'eventstoredb' ? new EventStoreConversationEraser(events, readModel) : readModel;
  return encryption === null ? stores : new CryptoShreddingEraser(stores, encryption.keys, encryption.vault);
}
