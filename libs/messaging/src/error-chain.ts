export interface ErrorLink {
  name: string;
  message: string;
  code?: string;
  /** kafkajs's protocol error type (MESSAGE_TOO_LARGE, ...), where the link is one. */
  type?: string;
}

/** An error and what it wraps: kafkajs nests the underlying error as `cause` or `originalError`. */
export function errorChain(error: unknown): ErrorLink[] {
  const chain: ErrorLink[] = [];
  let current: unknown = error;
  while (current instanceof Error && chain.length < 10) {
    const { code, type } = current as { code?: unknown; type?: unknown };
    chain.push({
      name: current.name,
      message: current.message,
      code: typeof code === 'string' ? code : undefined,
      type: typeof type === 'string' ? type : undefined,
    });
    current = (current as { cause?: unknown; originalError?: unknown }).cause ?? (current as { originalError?: unknown }).originalError;
  }
  return chain;
}
