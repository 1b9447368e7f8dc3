import {
  Equals,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import {
  JsonObject,
  JsonValue,
  MAX_ID_LENGTH,
  MAX_CITED_SOURCES,
  MAX_INDEX,
  MAX_JSON_DEPTH,
  MAX_USAGE_ENTRIES,
  MAX_CALL_ENTRIES,
  MAX_REASONING_ITEMS,
  PERSIST_CHOICES,
  PersistChoice,
  SUPPORTED_SCHEMA_VERSIONS,
  TOOL_EVENT_TYPES,
  ToolEventType,
} from './tool-event.types';
import { jsonDepth } from './json-depth';
import type * as T from './tool-event.types';

/** Kept identical to the `pattern`s in schema/tool-event.schema.json. */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const DATE_TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function Id(): PropertyDecorator {
  return (target, key) => {
    IsString()(target, key);
    IsNotEmpty({ message: '$property must not be empty' })(target, key);
    MaxLength(MAX_ID_LENGTH)(target, key);
  };
}

function Index(): PropertyDecorator {
  return (target, key) => {
    IsInt()(target, key);
    Min(0, { message: '$property must not be negative' })(target, key);
    Max(MAX_INDEX, { message: `$property must be at most ${MAX_INDEX}` })(target, key);
  };
}

/** schemaVersion 1's rule for token counts, kept as released. */
function CountV1(): PropertyDecorator {
  return (target, key) => {
    IsInt()(target, key);
    Min(0, { message: '$property must not be negative' })(target, key);
  };
}

function MaxJsonDepth(): PropertyDecorator {
  return ValidateBy({
    name: 'maxJsonDepth',
    validator: {
      validate: (value: unknown) => jsonDepth(value, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH,
      defaultMessage: () => `$property must not nest deeper than ${MAX_JSON_DEPTH} levels`,
    },
  });
}

export class EventEnvelopeDto implements T.EventEnvelope {
  @Matches(UUID_PATTERN, { message: 'eventId must be a UUID' })
  @IsString()
  eventId: string;

  @IsIn(TOOL_EVENT_TYPES)
  type: ToolEventType;

  @IsIn(SUPPORTED_SCHEMA_VERSIONS)
  @IsInt()
  schemaVersion: number;

  @Id() tenantId: string;
  @Id() conversationId: string;
  @Id() channel: string;
  @Id() runId: string;

  @Matches(DATE_TIME_PATTERN, { message: 'occurredAt must be an ISO-8601 date-time with a time zone' })
  @IsISO8601({ strict: true }, { message: 'occurredAt must be a valid ISO-8601 date-time' })
  occurredAt: string;

  @ValidateIf((event: EventEnvelopeDto) => event.userMessageId !== undefined)
  @Id()
  userMessageId?: string;
}

/** The producer's size of a payload it cut to fit: optional, and never null. */
function OriginalBytes(): PropertyDecorator {
  return (target, key) => {
    ValidateIf((event: Record<string | symbol, unknown>) => event[key] !== undefined)(target, key);
    Index()(target, key);
  };
}

/** Optional free text: absent is fine, null is not. */
function OptionalText(): PropertyDecorator {
  return (target, key) => {
    ValidateIf((event: Record<string | symbol, unknown>) => event[key] !== undefined)(target, key);
    IsString()(target, key);
  };
}

/** What a producer's persist hook kept of a payload; any other member is dropped. */
export class ProducerRedactionDto implements T.ProducerRedaction {
  @IsIn(PERSIST_CHOICES) persist: PersistChoice;
}

/** `producerRedacted`: absent, or true. */
function ProducerRedacted(): PropertyDecorator {
  return (target, key) => {
    ValidateIf((event: Record<string | symbol, unknown>) => event[key] !== undefined)(target, key);
    Equals(true, { message: '$property must be true when present' })(target, key);
  };
}

/** A producer's `redaction` is checked only beside `producerRedacted` (without it, it is ignored). */
function ProducerRedactionNote(): PropertyDecorator {
  return (target, key) => {
    ValidateIf((event: Record<string, unknown>) => event.producerRedacted !== undefined)(target, key);
    IsDefined()(target, key);
    IsObject({ message: '$property must be an object with persist' })(target, key);
    ValidateNested()(target, key);
  };
}

/** The producer published no payload (its hook chose metadata or none): the one case a result may be null. */
export function payloadWithheld(event: Record<string, unknown>): boolean {
  const redaction = event.redaction;
  return (
    event.producerRedacted === true &&
    typeof redaction === 'object' &&
    redaction !== null &&
    ((redaction as Record<string, unknown>).persist === 'metadata' || (redaction as Record<string, unknown>).persist === 'none')
  );
}

function ToolResult(): PropertyDecorator {
  return ValidateBy({
    name: 'toolResult',
    validator: {
      validate: (value: unknown, args) =>
        value !== undefined && (value !== null || payloadWithheld(args!.object as Record<string, unknown>)),
      defaultMessage: () => 'result must be a string or a JSON value (not null unless the producer withheld it)',
    },
  });
}

export class ToolCallRequestedDto extends EventEnvelopeDto implements T.ToolCallRequested {
  @Equals('ToolCallRequested') override type = 'ToolCallRequested' as const;
  @Index() roundIndex: number;
  @Index() sequenceIndex: number;

  @IsString()
  @MaxLength(MAX_ID_LENGTH)
  toolCallId: string;

  @Id() toolName: string;

  @IsObject({ message: 'arguments must be a JSON object' })
  @MaxJsonDepth()
  arguments: JsonObject;

  @OriginalBytes() originalBytes?: number;
  @ProducerRedacted() producerRedacted?: true;
  @ProducerRedactionNote() redaction?: T.RedactionNote;
}

export class ToolResultReceivedDto extends EventEnvelopeDto implements T.ToolResultReceived {
  @Equals('ToolResultReceived') override type = 'ToolResultReceived' as const;

  @IsString()
  @MaxLength(MAX_ID_LENGTH)
  toolCallId: string;

  @Index() roundIndex: number;
  @Index() sequenceIndex: number;

  @ToolResult()
  @MaxJsonDepth()
  result: JsonValue;

  @IsBoolean() isError: boolean;

  @OriginalBytes() originalBytes?: number;
  @ProducerRedacted() producerRedacted?: true;
  @ProducerRedactionNote() redaction?: T.RedactionNote;
}

/** Approvals name the call by its id: a decision may come in a later run, where only the id finds it. */
export class ToolApprovalRequestedDto extends EventEnvelopeDto implements T.ToolApprovalRequested {
  @Equals('ToolApprovalRequested') override type = 'ToolApprovalRequested' as const;
  @Id() toolCallId: string;
  @Index() roundIndex: number;
  @Index() sequenceIndex: number;
  @OptionalText() reason?: string;
}

export class ToolApprovalDecidedDto extends EventEnvelopeDto implements T.ToolApprovalDecided {
  @Equals('ToolApprovalDecided') override type = 'ToolApprovalDecided' as const;
  @Id() toolCallId: string;
  @Index() roundIndex: number;
  @Index() sequenceIndex: number;
  @IsBoolean() approved: boolean;
  @OptionalText() reason?: string;

  @ValidateIf((event: ToolApprovalDecidedDto) => event.decidedBy !== undefined)
  @Id()
  decidedBy?: string;
}

/** An array of at most MAX_USAGE_ENTRIES, with a message that says which of the two it is not. */
function UsageList(): PropertyDecorator {
  return ValidateBy({
    name: 'usageList',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.length <= MAX_USAGE_ENTRIES,
      defaultMessage: (args) =>
        Array.isArray(args?.value)
          ? `$property must have at most ${MAX_USAGE_ENTRIES} entries`
          : '$property must be an array with one entry per service call',
    },
  });
}

/** An array of at most MAX_CITED_SOURCES, with a message that says which of the two it is not. */
function CitedSourceList(): PropertyDecorator {
  return ValidateBy({
    name: 'citedSourceList',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.length <= MAX_CITED_SOURCES,
      defaultMessage: (args) =>
        Array.isArray(args?.value)
          ? `$property must have at most ${MAX_CITED_SOURCES} entries`
          : '$property must be an array of the source numbers the answer cites',
    },
  });
}

export class TokenUsageDto implements T.TokenUsage {
  @Index() inputTokens: number;
  @Index() outputTokens: number;

  @ValidateIf((entry: TokenUsageDto) => entry.model !== undefined)
  @Id()
  model?: string;
}

export class RunCompletedDto extends EventEnvelopeDto implements T.RunCompleted {
  @Equals('RunCompleted') override type = 'RunCompleted' as const;
  @Id() assistantMessageId: string;
  @Id() finishReason: string;

  // Absent is fine; null is not (IsOptional would let null through, the JSON Schema does not).
  @ValidateIf((event: RunCompletedDto) => event.usage !== undefined)
  @UsageList()
  @IsObject({ each: true, message: 'usage entries must be JSON objects' })
  @ValidateNested({ each: true })
  usage?: TokenUsageDto[];

  @ValidateIf((event: RunCompletedDto) => event.citedSources !== undefined)
  @CitedSourceList()
  @IsInt({ each: true, message: 'citedSources entries must be whole numbers' })
  @Min(0, { each: true, message: 'citedSources entries must not be negative' })
  @Max(MAX_INDEX, { each: true, message: `citedSources entries must be at most ${MAX_INDEX}` })
  citedSources?: number[];
}

/** schemaVersion 1. Never edited: events of this version are read through upcastToolEvent. */
export class TokenUsageV1Dto implements T.TokenUsageV1 {
  @CountV1() inputTokens: number;
  @CountV1() outputTokens: number;
}

/** schemaVersion 1. Never edited: events of this version are read through upcastToolEvent. */
export class RunCompletedV1Dto extends EventEnvelopeDto implements T.RunCompletedV1 {
  @Equals('RunCompleted') override type = 'RunCompleted' as const;
  @Id() assistantMessageId: string;
  @Id() finishReason: string;

  @ValidateIf((event: RunCompletedV1Dto) => event.usage !== undefined)
  @IsObject({ message: 'usage must be an object' })
  @ValidateNested()
  usage?: TokenUsageV1Dto;
}

export class RunFailureDetailDto implements T.RunFailureDetail {
  @Id() code: string;
  @IsString() message: string;
}

export class RunFailedDto extends EventEnvelopeDto implements T.RunFailed {
  @Equals('RunFailed') override type = 'RunFailed' as const;

  @IsDefined()
  @IsObject({ message: 'error must be an object with code and message' })
  @ValidateNested()
  error: RunFailureDetailDto;

  @ValidateIf((event: RunFailedDto) => event.usage !== undefined)
  @UsageList()
  @IsObject({ each: true, message: 'usage entries must be JSON objects' })
  @ValidateNested({ each: true })
  usage?: TokenUsageDto[];
}

/** A map of tool call ids (as the model gave them) to opaque strings: signatures, item ids. */
function CallIdMap(): PropertyDecorator {
  return ValidateBy({
    name: 'callIdMap',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        Object.keys(value).length <= MAX_CALL_ENTRIES &&
        Object.entries(value).every(([id, text]) => id.length <= MAX_ID_LENGTH && typeof text === 'string'),
      defaultMessage: () =>
        `$property must be an object of at most ${MAX_CALL_ENTRIES} tool call ids (at most ${MAX_ID_LENGTH} characters) to strings`,
    },
  });
}

/** The provider's reasoning items: JSON objects, as many as a response may hold. */
function ReasoningItems(): PropertyDecorator {
  return ValidateBy({
    name: 'reasoningItems',
    validator: {
      validate: (value: unknown) =>
        Array.isArray(value) &&
        value.length <= MAX_REASONING_ITEMS &&
        value.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item)),
      defaultMessage: () => `$property must be a list of at most ${MAX_REASONING_ITEMS} JSON objects (the provider's own items)`,
    },
  });
}

export class ModelResponseReceivedDto extends EventEnvelopeDto implements T.ModelResponseReceived {
  @Equals('ModelResponseReceived') override type = 'ModelResponseReceived' as const;

  @Index() roundIndex: number;
  @Id() provider: string;
  @Id() model: string;
  @OptionalText() text?: string;

  @ValidateIf((event: ModelResponseReceivedDto) => event.reasoning !== undefined)
  @ReasoningItems()
  @MaxJsonDepth()
  reasoning?: JsonObject[];

  @ValidateIf((event: ModelResponseReceivedDto) => event.callSignatures !== undefined)
  @CallIdMap()
  callSignatures?: Record<string, string>;

  @ValidateIf((event: ModelResponseReceivedDto) => event.callItemIds !== undefined)
  @CallIdMap()
  callItemIds?: Record<string, string>;
}

/** The classes of the current version. */
export const DTO_BY_TYPE = {
  ToolCallRequested: ToolCallRequestedDto,
  ToolResultReceived: ToolResultReceivedDto,
  ToolApprovalRequested: ToolApprovalRequestedDto,
  ToolApprovalDecided: ToolApprovalDecidedDto,
  RunCompleted: RunCompletedDto,
  RunFailed: RunFailedDto,
  ModelResponseReceived: ModelResponseReceivedDto,
} as const;

/** Classes of older versions, for the types whose shape that version had differently. */
export const OLDER_DTOS: Readonly<Record<number, Partial<Record<ToolEventType, new () => EventEnvelopeDto>>>> = {
  1: { RunCompleted: RunCompletedV1Dto },
};

/**
 * The class that checks an event of this type as published in this version.
 * A version that is missing or unsupported gets the current classes (its
 * schemaVersion fails them anyway).
 */
export function dtoFor(type: ToolEventType, schemaVersion: unknown): new () => EventEnvelopeDto {
  const older = typeof schemaVersion === 'number' ? OLDER_DTOS[schemaVersion]?.[type] : undefined;
  return older ?? DTO_BY_TYPE[type];
}

/**
 * Nested objects, or arrays of them, that must become class instances for
 * @ValidateNested to see their rules, by event class.
 */
export const NESTED_DTOS: ReadonlyMap<new () => EventEnvelopeDto, Record<string, new () => object>> = new Map<
  new () => EventEnvelopeDto,
  Record<string, new () => object>
>([
  [ToolCallRequestedDto, { redaction: ProducerRedactionDto }],
  [ToolResultReceivedDto, { redaction: ProducerRedactionDto }],
  [RunCompletedDto, { usage: TokenUsageDto }],
  [RunCompletedV1Dto, { usage: TokenUsageV1Dto }],
  [RunFailedDto, { error: RunFailureDetailDto, usage: TokenUsageDto }],
]);
