import { CURRENT_SCHEMA_VERSION, ToolEvent } from './tool-event.types';

/** Turns a stored event of version N into version N + 1; never edited once released. */
export type Upcaster = (event: Record<string, unknown>) => Record<string, unknown>;

/**
 * Upcasters by the version they read. Stored events are never rewritten
 * when the contract changes: readers bring them to the current shape.
 */
export const UPCASTERS: Readonly<Record<number, Upcaster>> = {};

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
