/**
 * Every history format a replay is given in, declared once: its name in the
 * service and the domain (the key), its value in the gRPC API's
 * `HistoryFormat` enum (`proto`), and the name clients and the CLI give it
 * (`client`). Each format's translator is the domain's
 * (libs/domain/src/replay/history-format-translators.ts); the clients derive
 * their tables from this one (the Python package's test holds its own row
 * for row to the proto). A new format is one row here, its enum value in
 * the proto and its translator.
 *
 * A plain file with no imports of its own: bundled into the client package
 * when it is built.
 */
export const HISTORY_FORMATS = {
  openai_chat: { proto: 'HISTORY_FORMAT_OPENAI_CHAT', client: 'openai' },
  anthropic_messages: { proto: 'HISTORY_FORMAT_ANTHROPIC_MESSAGES', client: 'anthropic' },
  openai_responses: { proto: 'HISTORY_FORMAT_OPENAI_RESPONSES', client: 'openai-responses' },
  gemini: { proto: 'HISTORY_FORMAT_GEMINI', client: 'gemini' },
  bedrock_converse: { proto: 'HISTORY_FORMAT_BEDROCK_CONVERSE', client: 'bedrock-converse' },
} as const;

/** A history format, as the service names it. */
export type HistoryFormat = keyof typeof HISTORY_FORMATS;

/** A history format, as the clients name it. */
export type ClientHistoryFormat = (typeof HISTORY_FORMATS)[HistoryFormat]['client'];

/** Every format, in the order they are listed. */
export const HISTORY_FORMAT_LIST: readonly HistoryFormat[] = Object.keys(HISTORY_FORMATS) as HistoryFormat[];
