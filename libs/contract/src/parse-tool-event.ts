import { validateSync, ValidationError } from 'class-validator';
import { AppError, ErrorCode, rejected } from '@toolhistory/errors';
import { DTO_BY_TYPE, NESTED_DTOS } from './tool-event.classes';
import { SUPPORTED_SCHEMA_VERSIONS, TOOL_EVENT_TYPES, ToolEvent, ToolEventType } from './tool-event.types';

export const DEFAULT_MAX_EVENT_BYTES = 1024 * 1024;

export type ParseResult = { ok: true; event: ToolEvent } | { ok: false; error: AppError };

/**
 * Turns one Kafka message value into a validated event, or a non-retriable
 * AppError whose message names each offending field and rule. Unknown
 * fields are dropped so the stored event is exactly the contract.
 */
export function parseToolEvent(value: Buffer | string | null, maxEventBytes = DEFAULT_MAX_EVENT_BYTES): ParseResult {
  if (value === null || value.length === 0) {
    return fail(rejected(ErrorCode.NotJson, 'message has no value'));
  }
  const size = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
  if (size > maxEventBytes) {
    return fail(rejected(ErrorCode.Oversize, `event is ${size} bytes, larger than the limit of ${maxEventBytes} bytes`));
  }
  let plain: unknown;
  try {
    plain = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'));
  } catch (error) {
    // The parser's message quotes the input, which may hold secrets: keep only where it failed.
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    return fail(rejected(ErrorCode.NotJson, `message is not valid JSON${position === undefined ? '' : ` (at position ${position})`}`));
  }
  return validateToolEvent(plain);
}

/** Validates an already-parsed value against the contract. */
export function validateToolEvent(plain: unknown): ParseResult {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return fail(rejected(ErrorCode.InvalidEvent, 'event must be a JSON object'));
  }
  const record = plain as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== 'string' || !(TOOL_EVENT_TYPES as readonly string[]).includes(type)) {
    return fail(
      rejected(
        ErrorCode.UnknownEventType,
        `type: ${JSON.stringify(type ?? null)} is not one of ${TOOL_EVENT_TYPES.join(', ')}`,
      ),
    );
  }
  const version = record.schemaVersion;
  if (typeof version === 'number' && Number.isInteger(version) && !(SUPPORTED_SCHEMA_VERSIONS as readonly number[]).includes(version)) {
    return fail(
      rejected(
        ErrorCode.UnsupportedSchemaVersion,
        `schemaVersion: ${version} is not supported (supported: ${SUPPORTED_SCHEMA_VERSIONS.join(', ')})`,
      ),
    );
  }

  const eventType = type as ToolEventType;
  const instance = Object.assign(new DTO_BY_TYPE[eventType](), record) as Record<string, unknown>;
  for (const [field, Nested] of Object.entries(NESTED_DTOS[eventType] ?? {})) {
    const value = instance[field];
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      instance[field] = Object.assign(new Nested(), value);
    }
  }
  const errors = validateSync(instance, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) {
    return fail(rejected(ErrorCode.InvalidEvent, describeValidationErrors(errors), { type: eventType }));
  }
  return { ok: true, event: toPlain(instance) as unknown as ToolEvent };
}

function fail(error: AppError): ParseResult {
  return { ok: false, error };
}

export function describeValidationErrors(errors: ValidationError[], parent = ''): string {
  const parts: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      // class-validator messages start with the property name; prefix the parents.
      parts.push(parent ? `${parent}.${message}` : message);
    }
    if (error.children?.length) parts.push(describeValidationErrors(error.children, path));
  }
  return parts.filter(Boolean).join('; ');
}

/** Class instances become plain objects, so nothing downstream depends on the DTO classes. */
function toPlain(instance: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(instance)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'object' && value !== null && !Array.isArray(value) && value.constructor !== Object
      ? { ...(value as object) }
      : value;
  }
  return out;
}
