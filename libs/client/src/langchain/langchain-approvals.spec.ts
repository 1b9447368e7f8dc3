import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { GraphInterrupt, NodeInterrupt, ParentCommand, Command } from '@langchain/langgraph';
import {
  approvalDecisionOf,
  callPositionIn,
  interruptIdOf,
  interruptReasonOf,
  isInterrupt,
  MAX_APPROVAL_REASON_LENGTH,
  resumeValueFor,
} from './langchain-approvals';
import { call } from './scripted-chat-model.fixture';

describe('LangGraph interrupts as approval requests', () => {
  it("recognises LangGraph's own interrupt errors, not its other bubbling signals or plain errors", () => {
    expect(isInterrupt(new GraphInterrupt([{ id: 'i1', value: 'ok?' }]))).toBe(true);
    expect(isInterrupt(new NodeInterrupt('stop here'))).toBe(true);
    expect(isInterrupt(new ParentCommand(new Command({ goto: 'x' })))).toBe(false);
    expect(isInterrupt(new Error('boom'))).toBe(false);
    expect(isInterrupt(undefined)).toBe(false);
  });

  it.each<[string, unknown, string | undefined]>([
    ['a string value', 'Refund 5 EUR?', 'Refund 5 EUR?'],
    ['a reason field', { reason: 'over the limit', amount: 5 }, 'over the limit'],
    ['a message field', { message: 'Send the mail?' }, 'Send the mail?'],
    ["an Agent Inbox request's description", { action_request: { action: 'refund' }, description: 'Refund A-1' }, 'Refund A-1'],
    ['a value without text fields', { amount: 5 }, undefined],
    ['a number', 42, undefined],
    ['an empty string', ' ', undefined],
  ])('takes the reason from %s', (_case, value, reason) => {
    expect(interruptReasonOf(new GraphInterrupt([{ id: 'i1', value }]))).toBe(reason);
  });

  it('keeps a long reason to a bounded length, and names the interrupt by its id', () => {
    const signal = new GraphInterrupt([{ id: 'abc', value: 'x'.repeat(10_000) }]);
    expect(interruptReasonOf(signal)).toHaveLength(MAX_APPROVAL_REASON_LENGTH);
    expect(interruptIdOf(signal)).toBe('abc');
    expect(interruptIdOf(new NodeInterrupt('no id'))).toBeUndefined();
  });
});

describe('resume values as approval decisions', () => {
  it.each<[string, unknown, object | undefined]>([
    ['true', true, { approved: true }],
    ['false', false, { approved: false }],
    ['a word', ' Approved ', { approved: true }],
    ['a denying word', 'reject', { approved: false }],
    [
      'an approved flag with a reason and who',
      { approved: false, reason: 'too much', decidedBy: 'grace' },
      { approved: false, reason: 'too much', decidedBy: 'grace' },
    ],
    ['an approve flag', { approve: true, comment: 'fine' }, { approved: true, reason: 'fine' }],
    ["an Agent Inbox 'accept'", { type: 'accept', args: null }, { approved: true }],
    ["an Agent Inbox 'ignore'", { type: 'ignore', args: null }, { approved: false }],
    ["an Agent Inbox 'response'", { type: 'response', args: 'do it tomorrow' }, undefined],
    [
      'a decision word with a message',
      { decision: 'deny', message: 'not today', decided_by: 'ops' },
      { approved: false, reason: 'not today', decidedBy: 'ops' },
    ],
    ["the human-in-the-loop middleware's one decision", { decisions: [{ type: 'approve' }] }, { approved: true }],
    ['several decisions (whose is whose is unknown)', { decisions: [{ type: 'approve' }, { type: 'reject' }] }, undefined],
    ['free text', 'Grace', undefined],
    ['a number', 1, undefined],
    ['nothing', undefined, undefined],
    ['a decider name too long for the contract', { approved: true, decidedBy: 'x'.repeat(300) }, { approved: true }],
  ])('reads %s', (_case, resume, decision) => {
    expect(approvalDecisionOf(resume)).toEqual(decision);
  });

  it("picks an interrupt's own value when a Command resumes several by id", () => {
    expect(resumeValueFor({ i1: true, i2: false }, 'i2')).toBe(false);
    expect(resumeValueFor({ approved: true }, 'i1')).toEqual({ approved: true });
    expect(resumeValueFor('yes', undefined)).toBe('yes');
  });
});

describe('callPositionIn', () => {
  const messages = [
    new HumanMessage('earlier question'),
    new AIMessage({ content: '', tool_calls: [call('old', 'get_order', {})] }),
    new ToolMessage({ content: 'x', tool_call_id: 'old' }),
    new AIMessage('earlier answer'),
    new HumanMessage('refund A-1 and B-2'),
    new AIMessage({ content: '', tool_calls: [call('c0', 'get_order', { orderId: 'A-1' })] }),
    new ToolMessage({ content: 'shipped', tool_call_id: 'c0' }),
    new AIMessage({ content: '', tool_calls: [call('c1', 'refund', { orderId: 'A-1' }), call('c2', 'refund', { orderId: 'B-2' })] }),
  ];

  it.each<[string, object | undefined]>([
    ['c2', { roundIndex: 1, sequenceIndex: 1, toolName: 'refund', callsInRound: 2 }],
    ['c0', { roundIndex: 0, sequenceIndex: 0, toolName: 'get_order', callsInRound: 1 }],
    ['old', { roundIndex: 0, sequenceIndex: 0, toolName: 'get_order', callsInRound: 1 }],
    ['unknown', undefined],
  ])('places %s by the rounds since the last human message before it', (toolCallId, position) => {
    expect(callPositionIn(messages, toolCallId)).toEqual(position);
  });
});
