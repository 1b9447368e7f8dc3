import type { ComponentChildren } from 'preact';
import { ApiError } from '../api';
import type { Loaded } from '../use-api';

export function ErrorNotice({ error }: { error: Error }) {
  const status = error instanceof ApiError ? `${error.status} ${error.code}: ` : '';
  return (
    <p class="notice error" role="alert">
      {status}
      {error.message}
    </p>
  );
}

/** Renders a loaded value, or says it is loading, or names the error. */
export function Await<T>({ loaded, children }: { loaded: Loaded<T>; children: (value: T) => ComponentChildren }) {
  if (loaded.state === 'loading') return <p class="notice">Loading…</p>;
  if (loaded.state === 'error') return <ErrorNotice error={loaded.error} />;
  return <>{children(loaded.value)}</>;
}
