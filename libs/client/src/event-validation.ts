import Ajv2020, { type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import schema from '../../contract/schema/tool-event.schema.json';
// Plain files of the contract with no imports of their own: bundled into the package when it is built.
import { jsonDepth } from '../../contract/src/json-depth';
import { DEFAULT_MAX_EVENT_BYTES as MAX_EVENT_BYTES, MAX_JSON_DEPTH } from '../../contract/src/tool-event.types';
import { InvalidToolEventError } from './tool-history-errors';

const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
addFormats(ajv);
const validateAgainstSchema = ajv.compile(schema);

/**
 * Checks an event with the contract's own rules before it leaves the worker:
 * the published JSON Schema, and the payload depth and event size that
 * JSON Schema cannot state. Throws
 * InvalidToolEventError naming each field and rule; returns the JSON to send.
 */
export function serializeValidEvent(event: Record<string, unknown>, maxEventBytes = MAX_EVENT_BYTES): string {
  const problems = eventProblems(event);
  if (problems.length > 0) throw new InvalidToolEventError(problems);
  const json = JSON.stringify(event);
  const bytes = Buffer.byteLength(json);
  if (bytes > maxEventBytes) throw new InvalidToolEventError([eventTooLarge(bytes, maxEventBytes)]);
  return json;
}

/** What breaks the contract in an event apart from its size: the JSON Schema's rules and the payload depth. */
export function eventProblems(event: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (!validateAgainstSchema(event)) problems.push(...describeSchemaErrors(validateAgainstSchema.errors ?? []));
  for (const field of ['arguments', 'result'] as const) {
    if (field in event && jsonDepth(event[field], MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      problems.push(`${field} must not nest deeper than ${MAX_JSON_DEPTH} levels`);
    }
  }
  return problems;
}

export function eventTooLarge(bytes: number, maxEventBytes: number): string {
  return `event is ${bytes} bytes, larger than the limit of ${maxEventBytes} bytes`;
}

function describeSchemaErrors(errors: readonly ErrorObject[]): string[] {
  const messages = errors
    // `if` failures only repeat the branch's own errors.
    .filter((error) => error.keyword !== 'if')
    .map((error) => {
      const field = error.instancePath.slice(1).replace(/\//g, '.');
      if (error.keyword === 'required') {
        const missing = (error.params as { missingProperty: string }).missingProperty;
        return `${field ? `${field}.` : ''}${missing} is required`;
      }
      return `${field || 'event'} ${error.message ?? 'is invalid'}`;
    });
  return [...new Set(messages)];
}
