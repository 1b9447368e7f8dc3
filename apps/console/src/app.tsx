import { useState } from 'preact/hooks';
import type { ConsoleCaller } from '@toolhistory/console-api';
import { ApiError, forgetToken, savedToken, saveToken } from './api';
import { ErrorNotice } from './components/notice';
import { DeadLettersPage } from './pages/dead-letters-page';
import { SearchPage } from './pages/search-page';
import { TimelinePage } from './pages/timeline-page';
import { UsagePage } from './pages/usage-page';
import { hrefOf, navigate, type Route, useRoute } from './route';
import { useApi } from './use-api';

/** Asked for when the API answers 401: the token goes to this tab's session storage, never into the URL. */
function TokenForm({ onSaved, refused }: { onSaved: () => void; refused: boolean }) {
  const [token, setToken] = useState('');
  return (
    <main class="sign-in">
      <h2>Sign in</h2>
      <p>
        This service checks who is calling. Paste a bearer token: audit:read for its tenants' conversations, search and usage;
        dead-letters:read for the dead letters.
      </p>
      {refused ? <p class="notice error">That token was not accepted.</p> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          saveToken(token);
          onSaved();
        }}
      >
        <textarea
          name="token"
          rows={4}
          autocomplete="off"
          spellcheck={false}
          value={token}
          onInput={(e) => setToken((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" disabled={token.trim() === ''}>
          Use this token
        </button>
      </form>
    </main>
  );
}

function tenantOf(route: Route): string | undefined {
  return 'tenant' in route ? route.tenant : undefined;
}

function TenantPicker({ caller, current }: { caller: ConsoleCaller; current?: string }) {
  const [typed, setTyped] = useState(current ?? '');
  if (caller.tenants !== '*') {
    return (
      <select
        name="tenant"
        aria-label="tenant"
        value={current ?? ''}
        onChange={(e) => navigate({ page: 'search', tenant: (e.target as HTMLSelectElement).value })}
      >
        <option value="" disabled>
          tenant…
        </option>
        {caller.tenants.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
    );
  }
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        if (typed.trim()) navigate({ page: 'search', tenant: typed.trim() });
      }}
    >
      <input
        name="tenant"
        aria-label="tenant"
        placeholder="tenant id"
        value={typed}
        onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
      />
    </form>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return (
        <main>
          <p class="notice">Choose a tenant to search its tool history, open a conversation or see its usage.</p>
        </main>
      );
    case 'conversation':
      return (
        <TimelinePage
          key={`${route.tenant}/${route.conversation}`}
          tenant={route.tenant}
          conversation={route.conversation}
          asOf={route.asOf}
        />
      );
    case 'search':
      return <SearchPage key={`${route.tenant}/${route.q ?? ''}`} tenant={route.tenant} q={route.q} />;
    case 'usage':
      return <UsagePage tenant={route.tenant} bucket={route.bucket} days={route.days} />;
    case 'dead-letters':
      return <DeadLettersPage />;
  }
}

export function App() {
  const route = useRoute();
  const [attempt, setAttempt] = useState(0);
  const me = useApi<ConsoleCaller>('me', { attempt: String(attempt) });
  const tenant = tenantOf(route);

  if (me.state === 'loading') return <p class="notice">Loading…</p>;
  if (me.state === 'error') {
    if (me.error instanceof ApiError && me.error.status === 401) {
      return <TokenForm refused={attempt > 0 && savedToken() !== null} onSaved={() => setAttempt((n) => n + 1)} />;
    }
    return (
      <main>
        <ErrorNotice error={me.error} />
        <button
          type="button"
          onClick={() => {
            forgetToken();
            setAttempt((n) => n + 1);
          }}
        >
          Use another token
        </button>
      </main>
    );
  }
  const caller = me.value;
  const operator = caller.tenants === '*' && caller.scopes.includes('dead-letters:read');
  return (
    <>
      <header>
        <h1>
          <a href={hrefOf({ page: 'home' })}>toolhistory</a>
        </h1>
        <TenantPicker caller={caller} current={tenant} />
        <nav>
          {tenant && caller.scopes.includes('audit:read') ? (
            <>
              <a href={hrefOf({ page: 'search', tenant })} class={route.page === 'search' ? 'current' : ''}>
                Search
              </a>
              <a href={hrefOf({ page: 'usage', tenant })} class={route.page === 'usage' ? 'current' : ''}>
                Usage
              </a>
            </>
          ) : null}
          {operator ? (
            <a href={hrefOf({ page: 'dead-letters' })} class={route.page === 'dead-letters' ? 'current' : ''}>
              Dead letters
            </a>
          ) : null}
        </nav>
        <span class="caller" data-testid="caller">
          {caller.authenticated ? caller.subject : 'no authentication'}
          {caller.authenticated ? (
            <button
              type="button"
              onClick={() => {
                forgetToken();
                location.reload();
              }}
            >
              Sign out
            </button>
          ) : null}
        </span>
      </header>
      <Page route={route} />
    </>
  );
}
