import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionAssistantMessageParam,
  ChatCompletionMessage,
  ChatCompletionMessageToolCall,
} from 'openai/resources/chat/completions';
import { MAX_USAGE_ENTRIES } from '../../../contract/src/tool-event.types';
import {
  answerTextOf,
  assistantMessageOf,
  boundedUsage,
  describeRunFailure,
  finishReasonOf,
  parseToolArguments,
  toolCallsOf,
  toolMessageContent,
  toolResultOf,
  usageOf,
} from './openai-completion-mapper';

const functionCall = (id: string, name: string, args: string): ChatCompletionMessageToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

const message = (toolCalls?: ChatCompletionMessageToolCall[], content: string | null = null): ChatCompletionMessage => ({
  role: 'assistant',
  content,
  refusal: null,
  ...(toolCalls ? { tool_calls: toolCalls } : {}),
});

const completion = (
  msg: ChatCompletionMessage,
  finishReason: ChatCompletion.Choice['finish_reason'],
  usage?: [number, number],
): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-test',
  choices: [{ index: 0, message: msg, finish_reason: finishReason, logprobs: null }],
  ...(usage ? { usage: { prompt_tokens: usage[0], completion_tokens: usage[1], total_tokens: usage[0] + usage[1] } } : {}),
});

describe('parseToolArguments', () => {
  it('parses a JSON object', () => {
    expect(parseToolArguments('{"city": "Paris", "days": [1, 2]}')).toEqual({ city: 'Paris', days: [1, 2] });
  });

  it('reads empty arguments as no arguments', () => {
    expect(parseToolArguments('')).toEqual({});
    expect(parseToolArguments('  ')).toEqual({});
  });

  it.each(['{"city": "Par', 'Paris', '[1,2]', '42', 'null', '"text"'])('keeps %j, which is no JSON object, as _raw', (text) => {
    expect(parseToolArguments(text)).toEqual({ _raw: text });
  });

  it('keeps an object nested deeper than the contract allows as _raw', () => {
    const deep = '{"a":'.repeat(70) + '1' + '}'.repeat(70);
    expect(parseToolArguments(deep)).toEqual({ _raw: deep });
  });
});

describe('toolCallsOf and assistantMessageOf', () => {
  it('numbers the function calls by position and parses their arguments', () => {
    const msg = message([functionCall('call_1', 'get_weather', '{"city":"Paris"}'), functionCall('call_2', 'get_time', '')]);
    expect(toolCallsOf(assistantMessageOf(completion(msg, 'tool_calls')))).toEqual([
      { sequenceIndex: 0, toolCallId: 'call_1', toolName: 'get_weather', arguments: { city: 'Paris' } },
      { sequenceIndex: 1, toolCallId: 'call_2', toolName: 'get_time', arguments: {} },
    ]);
  });

  it('has no calls for a message without tool_calls', () => {
    expect(toolCallsOf(message(undefined, 'hello'))).toEqual([]);
  });

  it('accepts a function call without `type`, as some compatible servers send it', () => {
    const call = { id: 'c', function: { name: 'f', arguments: '{}' } } as unknown as ChatCompletionMessageToolCall;
    expect(toolCallsOf(message([call]))).toEqual([{ sequenceIndex: 0, toolCallId: 'c', toolName: 'f', arguments: {} }]);
  });

  it('refuses a custom tool call, which the history could not replay as the model made it', () => {
    const custom: ChatCompletionMessageToolCall = { id: 'call_x', type: 'custom', custom: { name: 'sql', input: 'SELECT 1' } };
    expect(() => toolCallsOf(message([custom]))).toThrow(/tool_calls\[0\] \("call_x"\) is a "custom" tool call/);
  });

  it('refuses a completion without choices', () => {
    expect(() => assistantMessageOf({ ...completion(message(), 'stop'), choices: [] })).toThrow(/has no choices/);
  });
});

describe('finishReasonOf', () => {
  it('is stop when the model answered', () => {
    expect(finishReasonOf(completion(message(undefined, 'done'), 'stop'))).toBe('stop');
    expect(finishReasonOf(message(undefined, 'done'))).toBe('stop');
  });

  it('is tool_limit when the last model call still asked for tools', () => {
    const asking = message([functionCall('c', 'f', '{}')]);
    expect(finishReasonOf(completion(asking, 'tool_calls'))).toBe('tool_limit');
    expect(finishReasonOf(asking)).toBe('tool_limit');
  });

  it('is stop when an answer without tool calls was cut off or filtered: that call saw the last round, so it is replayed', () => {
    expect(finishReasonOf(completion(message(undefined, 'The wea'), 'length'))).toBe('stop');
    expect(finishReasonOf(completion(message(undefined, null), 'content_filter'))).toBe('stop');
  });
});

describe('answerTextOf', () => {
  it.each<[string, ChatCompletion | ChatCompletionMessage | ChatCompletionAssistantMessageParam, string]>([
    ["a completion's message", completion(message(undefined, 'Rain [source2].'), 'stop'), 'Rain [source2].'],
    ['a message without content (a refusal)', { ...message(undefined, null), refusal: 'no' }, ''],
    [
      "a kept message's text parts, not its refusals",
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'refusal', refusal: 'r' },
          { type: 'text', text: 'b' },
        ],
      },
      'ab',
    ],
  ])('reads %s', (_d, value, expected) => {
    expect(answerTextOf(value)).toBe(expected);
  });
});

describe('usageOf and boundedUsage', () => {
  it('takes prompt and completion tokens and the model', () => {
    expect(usageOf(completion(message(), 'stop', [120, 30]))).toEqual({ inputTokens: 120, outputTokens: 30, model: 'gpt-test' });
  });

  it('is undefined when the API reported no usage', () => {
    expect(usageOf(completion(message(), 'stop'))).toBeUndefined();
  });

  it('keeps within the contract: calls beyond the limit fold into the last entry with their totals', () => {
    const usage = Array.from({ length: MAX_USAGE_ENTRIES + 5 }, () => ({ inputTokens: 2, outputTokens: 1, model: 'm' }));
    const bounded = boundedUsage(usage);
    expect(bounded).toHaveLength(MAX_USAGE_ENTRIES);
    expect(bounded.at(-1)).toEqual({ inputTokens: 12, outputTokens: 6, model: 'm' });
    expect(bounded.reduce((sum, u) => sum + u.inputTokens, 0)).toBe(2 * usage.length);
  });
});

describe('tool outputs', () => {
  it('sends text as it is and JSON as its text; records JSON as JSON and null as the text the model saw', () => {
    expect(toolMessageContent('18°C')).toBe('18°C');
    expect(toolMessageContent({ tempC: 18 })).toBe('{"tempC":18}');
    expect(toolResultOf({ tempC: 18 })).toEqual({ tempC: 18 });
    expect(toolMessageContent(null)).toBe('null');
    expect(toolResultOf(null)).toBe('null');
  });
});

describe('describeRunFailure', () => {
  it("uses the API error's code", () => {
    const error = APIError.generate(
      429,
      { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded', type: 'requests' } },
      undefined,
      new Headers(),
    );
    expect(describeRunFailure(error)).toEqual({ code: 'rate_limit_exceeded', message: '429 Rate limit reached' });
  });

  it("falls back to the error's class name", () => {
    expect(describeRunFailure(APIError.generate(500, undefined, undefined, new Headers()))).toEqual({
      code: 'InternalServerError',
      message: '500 status code (no body)',
    });
    expect(describeRunFailure(new APIConnectionError({ message: 'Connection error.' }))).toEqual({
      code: 'APIConnectionError',
      message: 'Connection error.',
    });
    expect(describeRunFailure(new TypeError('bad'))).toEqual({ code: 'TypeError', message: 'bad' });
  });

  it("codes an aborted request or run 'aborted', as every adapter that sees the abort does", () => {
    expect(describeRunFailure(new APIUserAbortError())).toEqual({ code: 'aborted', message: 'Request was aborted.' });
    expect(describeRunFailure(new DOMException('This operation was aborted', 'AbortError'))).toEqual({
      code: 'aborted',
      message: 'This operation was aborted',
    });
  });

  it('takes a { code, message } as it is, and anything else as text', () => {
    expect(describeRunFailure({ code: 'tool_crashed', message: 'boom' })).toEqual({ code: 'tool_crashed', message: 'boom' });
    expect(describeRunFailure('boom')).toEqual({ code: 'error', message: 'boom' });
  });
});
