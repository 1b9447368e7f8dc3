import { CURRENT_SCHEMA_VERSION, ToolEvent } from './tool-event.types';

/** Turns a stored event of version N into version N + 1; never edited once released. */
export type Upcaster = (event: Record<string, unknown>) => Record<string, unknown>;

/**
 * schemaVersion 1 -> 2. RunCompleted's `usage` was one total for the whole
 * run; it becomes a list with one entry per service call, so a v1 total is
 * a list of one entry (without a model: v1 did not say which). An absent
 * usage stays absent. Every other type keeps its fields.
 *
 * Released: never edit this function. Stored v1 events are read through it
 * for as long as they exist; a later change to the contract is a new
 * version with an upcaster of its own.
 */
export const upcastV1ToV2: Upcaster = (event) => {
  const out: Record<string, unknown> = { ...event, schemaVersion: 2 };
  const usage = event.usage;
  if (event.type === 'RunCompleted' && typeof usage === 'object' && usage !== null && !Array.isArray(usage)) {
    const { inputTokens, outputTokens } = usage as Record<string, unknown>;
    out.usage = [{ inputTokens, outputTokens }];
  }
  return out;
};

/**
 * Upcasters by the version they read. Stored events are never rewritten
 * when the contract changes: readers bring them to the current shape.
 * Entries are never edited or removed once released.
 */
export const UPCASTERS: Readonly<Record<number, Upcaster>> = {
  1: upcastV1ToV2,
};

/**
 * An event as stored (any supported version) in the current shape. Events
 * already current are returned as they are, without copying.
 */
export function upcastToolEvent(stored: unknown): ToolEvent {
  let event = stored as Record<string, unknown>;
  let version = typeof event.schemaVersion === 'number' ? event.schemaVersion : CURRENT_SCHEMA_VERSION;
  while (version < CURRENT_SCHEMA_VERSION) {
    const upcast = UPCASTERS[version];
    if (!upcast) throw new Error(`no upcaster from schemaVersion ${version}`);
    event = { ...upcast(event), schemaVersion: version + 1 };
    version += 1;
  }
  return event as unknown as ToolEvent;
}
