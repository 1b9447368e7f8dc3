import { getMetadataStorage, validateSync, ValidationError } from 'class-validator';
import { AppError, ErrorCode, rejected } from '@toolhistory/errors';
import { validate as matchesEventSchema } from './generated/tool-event-schema-validator';
import { jsonDepth } from './json-depth';
import { dtoFor, NESTED_DTOS } from './tool-event.classes';
import {
  DEFAULT_MAX_EVENT_BYTES,
  MAX_JSON_DEPTH,
  StoredToolEvent,
  SUPPORTED_SCHEMA_VERSIONS,
  TOOL_EVENT_TYPES,
  ToolEventType,
} from './tool-event.types';

/**
 * A valid event is returned in the version it was published in, checked by
 * that version's rules: it is stored so, and upcastToolEvent brings it to
 * the current shape for anything that applies rules to it.
 */
export type ParseResult = { ok: true; event: StoredToolEvent } | { ok: false; error: AppError };

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

/**
 * Validates an already-parsed value against the contract. The schema,
 * compiled ahead of time, answers for the events that pass (nearly all, and
 * fast); an event it refuses goes through the validation classes, which name
 * each problem. Both say the same of every event
 * (tool-event-schema.spec.ts), and both paths give the same event
 * (parse-tool-event.spec.ts).
 */
export function validateToolEvent(plain: unknown): ParseResult {
  if (matchesEventSchema(plain) && payloadsWithinDepth(plain as Record<string, unknown>)) {
    return { ok: true, event: producerRedactionOnly(contractFields(plain as Record<string, unknown>)) };
  }
  return validateToolEventWithClasses(plain);
}

/**
 * A producer's `redaction` counts only beside `producerRedacted: true`, and
 * then only its `persist`; otherwise it is dropped like any unknown field
 * (the recorder's note is its own).
 */
function producerRedactionOnly(event: StoredToolEvent): StoredToolEvent {
  if (event.redaction === undefined || (event as { producerRedacted?: unknown }).producerRedacted === true) return event;
  const { redaction: _ignored, ...rest } = event;
  return rest as StoredToolEvent;
}

/** The validation classes alone: every problem named. */
export function validateToolEventWithClasses(plain: unknown): ParseResult {
  if (typeof plain !== 'object' || plain === null || Array.isArray(plain)) {
    return fail(rejected(ErrorCode.InvalidEvent, 'event must be a JSON object'));
  }
  const record = plain as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== 'string' || !(TOOL_EVENT_TYPES as readonly string[]).includes(type)) {
    return fail(rejected(ErrorCode.UnknownEventType, `type: ${JSON.stringify(type ?? null)} is not one of ${TOOL_EVENT_TYPES.join(', ')}`));
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
  const Dto = dtoFor(eventType, version);
  const instance = Object.assign(new Dto(), record) as unknown as Record<string, unknown>;
  for (const [field, Nested] of Object.entries(NESTED_DTOS.get(Dto) ?? {})) {
    const value = instance[field];
    if (Array.isArray(value)) instance[field] = value.map((item) => (isPlainObject(item) ? Object.assign(new Nested(), item) : item));
    else if (isPlainObject(value)) instance[field] = Object.assign(new Nested(), value);
  }
  const errors = validateSync(instance, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) {
    return fail(rejected(ErrorCode.InvalidEvent, describeValidationErrors(errors), { type: eventType }));
  }
  return { ok: true, event: producerRedactionOnly(toPlain(instance) as unknown as StoredToolEvent) };
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fail(error: AppError): ParseResult {
  return { ok: false, error };
}

export function describeValidationErrors(errors: ValidationError[], parent = ''): string {
  const parts: string[] = [];
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.value === undefined && error.constraints) {
      // Every rule of a missing field fails; the one thing to say is that it is missing.
      parts.push(`${path} is required`);
      continue;
    }
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
    out[key] = Array.isArray(value) ? value.map(plainCopy) : plainCopy(value);
  }
  return out;
}

function plainCopy(value: unknown): unknown {
  return isPlainObject(value) && value.constructor !== Object ? { ...value } : value;
}

/** What JSON Schema cannot state: how deep the payloads nest. */
function payloadsWithinDepth(record: Record<string, unknown>): boolean {
  return (
    jsonDepth(record.arguments, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH &&
    jsonDepth(record.result, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH &&
    jsonDepth(record.reasoning, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH
  );
}

/** The fields a class declares rules for: what its whitelist keeps. */
const declaredFields = new Map<new () => object, ReadonlySet<string>>();
function fieldsOf(Dto: new () => object): ReadonlySet<string> {
  let fields = declaredFields.get(Dto);
  if (fields === undefined) {
    fields = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(Dto, '', true, false)
        .map((rule) => rule.propertyName),
    );
    declaredFields.set(Dto, fields);
  }
  return fields;
}

/**
 * A valid event as the classes' whitelist leaves it: `type` first, then the
 * declared fields in the order received, nested objects (usage, error)
 * likewise; payloads untouched.
 */
function contractFields(record: Record<string, unknown>): StoredToolEvent {
  const Dto = dtoFor(record.type as ToolEventType, record.schemaVersion);
  const nested = NESTED_DTOS.get(Dto) ?? {};
  const pick = (value: unknown, Nested: new () => object): unknown => {
    if (!isPlainObject(value)) return value;
    const fields = fieldsOf(Nested);
    return Object.fromEntries(Object.entries(value).filter(([key, item]) => fields.has(key) && item !== undefined));
  };
  const fields = fieldsOf(Dto);
  const out: Record<string, unknown> = { type: record.type };
  for (const [key, value] of Object.entries(record)) {
    if (!fields.has(key) || value === undefined) continue;
    const Nested = nested[key];
    out[key] = Nested === undefined ? value : Array.isArray(value) ? value.map((item) => pick(item, Nested)) : pick(value, Nested);
  }
  return out as unknown as StoredToolEvent;
}
