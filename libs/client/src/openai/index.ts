// Helpers for a tool loop (chat completions or Responses) of the OpenAI Node SDK (`openai`, a peer dependency).
// Its types only are imported: the helpers work with any client instance and need no SDK at run time.
export { OpenAiToolLoopRecorder, recordOpenAiToolLoop } from './openai-tool-loop-recorder';
export type { OpenAiFinishOptions, OpenAiRecordedRound, OpenAiToolLoopOptions, OpenAiToolOutputOptions } from './openai-tool-loop-recorder';
export { describeRunFailure, finishReasonOf, parseToolArguments, toolMessageContent } from './openai-completion-mapper';
export type { OpenAiAssistantMessage, OpenAiRecordedToolCall, OpenAiToolOutput } from './openai-completion-mapper';
export { functionCallOutputItem, responseRoundOf } from './openai-responses-mapper';
export type { OpenAiResponse, OpenAiResponseRound } from './openai-responses-mapper';
