/**
 * The replayed messages are what each vendor's SDK accepts: one
 * conversation (parallel calls, a JSON result, an error result, an id the
 * stricter APIs refuse, an empty id, an expiry placeholder) is replayed in
 * every format, each format's JSON is written into a generated .ts file as a
 * constant of the SDK's own message type, and the files are compiled under
 * --strict. A failing format fails with the compiler's diagnostics. The
 * pairing rules the types cannot say (every call answered, the same ids and
 * names) are checked on the same messages.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { ApprovalStatus, Round } from '../../libs/client/src/generated/toolhistory/v1/toolhistory';
import { toAiSdkMessages } from '../../libs/client/src/history-formats';
import { formatConversationTurn } from '../../libs/domain/src/replay/format-conversation.fixture';
import type { HistoryFormat, ReplayedRound } from '../../libs/domain/src/replay/replay-history';
import { FORMAT_PROBLEMS } from '../../libs/domain/src/replay/format-problems.fixture';
import {
  REASONING_BY_FORMAT,
  REASONING_POLICY,
  reasoningConversation,
  reasoningTurns,
} from '../../libs/domain/src/replay/reasoning-conversation.fixture';
import { replayOf, T0 } from '../../libs/domain/src/replay/replay-test-support.fixture';

const ROOT = join(__dirname, '..', '..');

/** Each format's messages, and the vendor type a list of them must be. */
const VENDOR_TYPES: Record<HistoryFormat | 'ai_sdk', { type: string; from: string }> = {
  openai_chat: { type: 'ChatCompletionMessageParam', from: 'openai/resources/chat/completions' },
  anthropic_messages: { type: 'MessageParam', from: '@anthropic-ai/sdk/resources/messages' },
  openai_responses: { type: 'ResponseInputItem', from: 'openai/resources/responses/responses' },
  gemini: { type: 'Content', from: '@google/genai' },
  bedrock_converse: { type: 'Message', from: '@aws-sdk/client-bedrock-runtime' },
  // The client's format, made from the structured rounds (libs/client/src/history-formats.ts).
  ai_sdk: { type: 'ModelMessage', from: 'ai' },
};
type Format = keyof typeof VENDOR_TYPES;
const FORMATS = Object.keys(VENDOR_TYPES) as Format[];
/** The formats whose API takes a round's reasoning back. */
type ReasoningFormat = keyof typeof REASONING_BY_FORMAT;
const REASONING_FORMATS = Object.keys(REASONING_BY_FORMAT) as ReasoningFormat[];

/** The domain's rounds as the client's generated types carry them. */
function clientRounds(rounds: readonly ReplayedRound[]): Round[] {
  return rounds.map((round) =>
    Round.fromPartial({
      roundIndex: round.roundIndex,
      resumedFromRunId: round.resumedFromRunId ?? '',
      calls: round.calls.map((call) => ({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        argumentsJson: JSON.stringify(call.arguments),
        result: call.result,
        isError: call.isError,
        sequenceIndex: call.sequenceIndex,
        requestedAt: new Date(call.requestedAt),
        completedAt: call.completedAt === null ? undefined : new Date(call.completedAt),
        expired: call.expired,
        invalidatedBy: call.invalidatedBy ?? '',
        interrupted: call.interrupted,
        approval: ApprovalStatus.APPROVAL_STATUS_NONE,
        compactedItems: call.compactedItems,
      })),
    }),
  );
}

/**
 * The reasoning turn as the AI SDK's messages, for the provider that
 * recorded it: the OpenAI chat rounds replayed with `provider` named (what
 * the client asks for), each with its response, made into ModelMessages.
 */
function aiSdkReasoningMessagesIn(format: ReasoningFormat): unknown[] {
  const recorded = REASONING_BY_FORMAT[format];
  const { turns } = replayOf(
    reasoningConversation(recorded),
    { format: 'openai_chat', provider: recorded.provider, asOf: T0 + 30_000 },
    REASONING_POLICY,
  );
  return turns.flatMap((turn) => {
    const rounds = clientRounds(turn.rounds).map((round, at) => {
      const response = turn.rounds[at].response;
      return response === undefined
        ? round
        : {
            ...round,
            provider: response.provider,
            model: response.model,
            text: response.text ?? '',
            reasoningJson: response.reasoning === undefined ? '' : JSON.stringify(response.reasoning),
            callSignatures: response.callSignatures ?? {},
            callItemIds: response.callItemIds ?? {},
          };
    });
    return toAiSdkMessages(rounds);
  });
}

/** The reasoning turn (an approval resumed) as replayed to the provider that recorded it, all its runs' messages in order. */
function reasoningMessagesIn(format: ReasoningFormat): unknown[] {
  return reasoningTurns(format, REASONING_BY_FORMAT[format]).flatMap((turn) => turn.messages);
}

const PLACE = ['reasoning', 'text', 'tool-call'];
const byPlace = (a: string, b: string) => PLACE.indexOf(a) - PLACE.indexOf(b);

function messagesIn(format: Format): unknown[] {
  return format === 'ai_sdk'
    ? toAiSdkMessages(clientRounds(formatConversationTurn('openai_chat').rounds))
    : formatConversationTurn(format).messages;
}

/** A module that types the messages, as JSON, with the vendor's own type: `const messages: Message[] = [...]`. */
function typedModule(format: Format, messages: unknown): string {
  const { type, from } = VENDOR_TYPES[format];
  return `import type { ${type} } from '${from}';\n\nexport const messages: ${type}[] = ${JSON.stringify(messages, null, 2)};\n`;
}

/**
 * The compiler's diagnostics for each file, as `file:line:col - error TSnnnn: message`
 * with the offending line. Packages resolve from the repository's root, where
 * the vendor SDKs are installed, wherever the files were written.
 */
function compile(files: Record<string, string>): Record<string, string[]> {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    skipLibCheck: true,
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  const resolveFrom = join(ROOT, 'package.json');
  host.resolveModuleNameLiterals = (literals, containingFile, _redirect, compilerOptions) =>
    literals.map((literal) =>
      ts.resolveModuleName(literal.text, Object.hasOwn(files, containingFile) ? resolveFrom : containingFile, compilerOptions, host),
    );
  const program = ts.createProgram(Object.keys(files), options, host);
  const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
  if (diagnostics.length > 0) throw new Error(diagnostics.map(render).join('\n'));
  return Object.fromEntries(
    Object.keys(files).map((file) => {
      const source = program.getSourceFile(file)!;
      return [file, [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(render)];
    }),
  );
}

function render(diagnostic: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (!diagnostic.file || diagnostic.start === undefined) return `error TS${diagnostic.code}: ${message}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const text = diagnostic.file.text.split('\n')[line].trim();
  return `${diagnostic.file.fileName}:${line + 1}:${character + 1} - error TS${diagnostic.code}: ${message}\n    ${text}`;
}

describe("replayed messages against each vendor SDK's own types, under --strict", () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolhistory-vendor-types-'));
  const fileOf = (format: Format, variant = '') => join(dir, `${format.replace(/_/g, '-')}${variant}.ts`);
  let diagnostics: Record<string, string[]>;

  beforeAll(() => {
    const files: Record<string, string> = {};
    for (const format of FORMATS) {
      const messages = messagesIn(format);
      files[fileOf(format)] = typedModule(format, messages);
      // A control that must not compile: a field no message of the API has, so the type is really the vendor's (not `any`).
      const [first, ...rest] = messages as object[];
      files[fileOf(format, '.control')] = typedModule(format, [{ ...first, not_a_field: 1 }, ...rest]);
    }
    for (const format of REASONING_FORMATS) files[fileOf(format, '.reasoning')] = typedModule(format, reasoningMessagesIn(format));
    for (const format of REASONING_FORMATS) files[fileOf('ai_sdk', `.${format}`)] = typedModule('ai_sdk', aiSdkReasoningMessagesIn(format));
    for (const [file, text] of Object.entries(files)) writeFileSync(file, text);
    diagnostics = compile(files);
  }, 120_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each(FORMATS)('%s: the messages compile as the SDK type', (format) => {
    expect(diagnostics[fileOf(format)]).toEqual([]);
  });

  it.each(FORMATS)('%s: the control with an unknown field does not', (format) => {
    expect(diagnostics[fileOf(format, '.control')]).toEqual([
      expect.stringMatching(/error TS2353: Object literal may only specify known properties/),
    ]);
  });

  it.each(REASONING_FORMATS)('%s: a resumed turn with its reasoning compiles as the SDK type', (format) => {
    expect(diagnostics[fileOf(format, '.reasoning')]).toEqual([]);
  });

  it.each(REASONING_FORMATS)('%s: a resumed turn with its reasoning is valid by the placement rules its API enforces', (format) => {
    const messages = reasoningMessagesIn(format);
    expect(FORMAT_PROBLEMS[format](messages as never)).toEqual([]);
    expect(JSON.stringify(messages)).toContain(JSON.stringify(REASONING_BY_FORMAT[format].reasoning(1)[0]));
  });

  it.each(REASONING_FORMATS)(
    "ai_sdk: a resumed turn recorded through %s's provider compiles as ModelMessage, its reasoning as reasoning parts",
    (format) => {
      expect(diagnostics[fileOf('ai_sdk', `.${format}`)]).toEqual([]);
      const assistant = aiSdkReasoningMessagesIn(format)[0] as { content: Array<{ type: string }> };
      // The round's reasoning parts first, then its text, then its calls.
      expect(assistant.content[0].type).toBe('reasoning');
      expect(assistant.content.map((part) => part.type)).toEqual([...assistant.content.map((part) => part.type)].sort(byPlace));
    },
  );

  it.each(Object.keys(FORMAT_PROBLEMS) as HistoryFormat[])('%s: valid by the pairing rules its API enforces', (format) => {
    expect(FORMAT_PROBLEMS[format](formatConversationTurn(format).messages)).toEqual([]);
  });

  it('covers every case: parallel calls, JSON, text and error results, a mapped id, an empty id and a placeholder', () => {
    const { rounds } = formatConversationTurn('openai_chat');
    const calls = rounds.flatMap((r) => r.calls);
    expect(rounds[0].calls.length).toBeGreaterThan(1);
    expect(calls.some((c) => c.resultJson !== undefined && typeof c.resultJson === 'object')).toBe(true);
    expect(calls.some((c) => c.resultJson === undefined && !c.isError && !c.expired)).toBe(true);
    expect(calls.some((c) => c.isError)).toBe(true);
    expect(calls.some((c) => c.toolCallId.includes('.'))).toBe(true);
    expect(calls.some((c) => /^call_[0-9a-f]{26}$/.test(c.toolCallId))).toBe(true);
    expect(calls.some((c) => c.expired)).toBe(true);
  });
});
