import { AIMessage, ToolMessage } from '@langchain/core/messages';
import {
  boundedUsage,
  errorResultOf,
  failureDetailOf,
  isControlFlowSignal,
  isRunAbort,
  isToolAbort,
  tokenUsageOf,
  toJsonObject,
  toolMessagesIn,
  toolOutcomeOf,
} from './langchain-payload-converter';

describe('LangChain payloads as the event contract wants them', () => {
  it('makes arguments a JSON object: drops what JSON cannot hold, wraps what is no object', () => {
    expect(toJsonObject({ a: 1, when: new Date('2026-01-02T03:04:05Z'), skip: undefined })).toEqual({
      a: 1,
      when: '2026-01-02T03:04:05.000Z',
    });
    expect(toJsonObject('plain')).toEqual({ input: 'plain' });
    expect(toJsonObject([1, 2])).toEqual({ input: [1, 2] });
    expect(toJsonObject(undefined)).toEqual({});
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(toJsonObject(cyclic)).toEqual({ input: '[object Object]' });
  });

  it("takes a tool's result from its ToolMessage (status error is an error result), a Command's update, or the plain value", () => {
    expect(toolOutcomeOf(new ToolMessage({ content: 'ok', tool_call_id: 'c1' }))).toEqual({ result: 'ok', isError: false });
    expect(toolOutcomeOf(new ToolMessage({ content: 'bad', tool_call_id: 'c1', status: 'error' }))).toEqual({
      result: 'bad',
      isError: true,
    });
    const blocks = [{ type: 'text', text: 'hello' }];
    expect(toolOutcomeOf(new ToolMessage({ content: blocks, tool_call_id: 'c1' }))).toEqual({ result: blocks, isError: false });
    const command = {
      lg_name: 'Command',
      update: {
        messages: [new ToolMessage({ content: 'other', tool_call_id: 'c0' }), new ToolMessage({ content: 'mine', tool_call_id: 'c1' })],
      },
    };
    expect(toolOutcomeOf(command, 'c1')).toEqual({ result: 'mine', isError: false });
    expect(toolOutcomeOf({ n: 1 })).toEqual({ result: { n: 1 }, isError: false });
    expect(toolOutcomeOf(undefined)).toEqual({ result: '', isError: false });
  });

  it('finds the ToolMessages of a node update, a list, or a Command', () => {
    const message = new ToolMessage({ content: 'x', tool_call_id: 'c1' });
    expect(toolMessagesIn({ messages: [new AIMessage('a'), message] })).toEqual([message]);
    expect(toolMessagesIn([message, 'noise'])).toEqual([message]);
    expect(toolMessagesIn([{ lg_name: 'Command', update: { messages: [message] } }])).toEqual([message]);
    expect(toolMessagesIn('nothing')).toEqual([]);
  });

  it('describes errors: error results as String(error), failures with LangChain code, Node code or class name', () => {
    expect(errorResultOf(new TypeError('bad input'))).toBe('TypeError: bad input');
    expect(errorResultOf({ reason: 'nope' })).toBe('{"reason":"nope"}');
    expect(failureDetailOf(Object.assign(new Error('slow down'), { lc_error_code: 'MODEL_RATE_LIMIT' }))).toEqual({
      code: 'MODEL_RATE_LIMIT',
      message: 'slow down',
    });
    expect(failureDetailOf(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toEqual({ code: 'ECONNRESET', message: 'reset' });
    expect(failureDetailOf(new RangeError('too far'))).toEqual({ code: 'RangeError', message: 'too far' });
    expect(failureDetailOf('just text')).toEqual({ code: 'Error', message: 'just text' });
    expect(failureDetailOf(new Error('x'.repeat(5000))).message).toHaveLength(4000);
  });

  it.each([
    ["LangGraph's Error('Abort')", new Error('Abort'), true, false],
    ["LangChain's Error('Aborted')", new Error('Aborted'), false, true],
    ['an AbortError (DOMException)', new DOMException('This operation was aborted', 'AbortError'), true, true],
    ['an Error named AbortError', Object.assign(new Error('stopped'), { name: 'AbortError' }), true, true],
    ['a TimeoutError (DOMException)', new DOMException('timed out', 'TimeoutError'), false, false],
    ['a TypeError saying Abort', new TypeError('Abort'), false, false],
    ['an Error that says more', new Error('Aborted: the provider hung up'), false, false],
    ['text', 'Abort', false, false],
    ['nothing', undefined, false, false],
  ])('tells an abort (%s) of a run, of a tool run', (_, error, ofRun, ofTool) => {
    expect(isRunAbort(error)).toBe(ofRun);
    expect(isToolAbort(error)).toBe(ofTool);
    expect(failureDetailOf(error).code === 'aborted').toBe(ofRun);
  });

  it("reads a model call's tokens from usage_metadata, else the provider's llmOutput, with the model's name", () => {
    const message = new AIMessage({
      content: '',
      usage_metadata: { input_tokens: 12, output_tokens: 3, total_tokens: 15 },
      response_metadata: { model_name: 'gpt-x' },
    });
    expect(tokenUsageOf(message, undefined, 'called')).toEqual({ inputTokens: 12, outputTokens: 3, model: 'gpt-x' });
    expect(tokenUsageOf(new AIMessage('hi'), { tokenUsage: { promptTokens: 4, completionTokens: 2 } }, 'called')).toEqual({
      inputTokens: 4,
      outputTokens: 2,
      model: 'called',
    });
    expect(tokenUsageOf(new AIMessage('hi'), {}, 'called')).toBeUndefined();
    expect(tokenUsageOf(undefined, undefined)).toBeUndefined();
  });

  it('folds the model calls beyond the contract limit of 1,000 into the last entry, totals kept', () => {
    const calls = Array.from({ length: 1_002 }, (_, i) => ({ inputTokens: i, outputTokens: 1, model: 'm' }));
    const bounded = boundedUsage(calls);
    expect(bounded).toHaveLength(1_000);
    expect(bounded[998]).toEqual(calls[998]);
    expect(bounded[999]).toEqual({ inputTokens: 999 + 1_000 + 1_001, outputTokens: 3, model: 'm' });
    expect(boundedUsage(calls.slice(0, 2))).toEqual(calls.slice(0, 2));
  });

  it("recognises LangGraph's control-flow signals by their bubble-up mark", () => {
    class GraphInterrupt extends Error {
      get is_bubble_up() {
        return true;
      }
    }
    expect(isControlFlowSignal(new GraphInterrupt())).toBe(true);
    expect(isControlFlowSignal(new Error('x'))).toBe(false);
  });
});
