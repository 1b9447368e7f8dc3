import { useState } from 'preact/hooks';
import type { SearchResultsView } from '@toolhistory/console-api';
import { segment } from '../api';
import { formatDuration, formatTime } from '../components/format';
import { Snippet } from '../components/json-view';
import { Await } from '../components/notice';
import { hrefOf, navigate } from '../route';
import { useApi } from '../use-api';

export function SearchPage({ tenant, q }: { tenant: string; q?: string }) {
  const [text, setText] = useState(q ?? '');
  const [conversation, setConversation] = useState('');
  const loaded = useApi<SearchResultsView>(q ? `tenants/${segment(tenant)}/search` : null, { q });
  return (
    <main>
      <h2>Search the tool history of {tenant}</h2>
      <form
        class="inline"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate({ page: 'search', tenant, q: text.trim() || undefined });
        }}
      >
        <input
          name="q"
          type="search"
          placeholder="words in tool names, arguments or results"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Search</button>
      </form>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          if (conversation.trim()) navigate({ page: 'conversation', tenant, conversation: conversation.trim() });
        }}
      >
        <input
          name="conversation"
          placeholder="conversation id"
          value={conversation}
          onInput={(e) => setConversation((e.target as HTMLInputElement).value)}
        />
        <button type="submit">Open conversation</button>
      </form>
      {q ? (
        <Await loaded={loaded}>
          {({ hits }) =>
            hits.length === 0 ? (
              <p class="notice">No invocation matches “{q}”.</p>
            ) : (
              <table class="hits">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Tool</th>
                    <th>Status</th>
                    <th>Duration</th>
                    <th>Match</th>
                    <th>Conversation</th>
                  </tr>
                </thead>
                <tbody>
                  {hits.map(({ invocation: i, snippet }) => (
                    <tr data-testid="search-hit" key={`${i.conversationId}/${i.runId}/${i.roundIndex}/${i.sequenceIndex}/${i.toolCallId}`}>
                      <td>{formatTime(i.at)}</td>
                      <td>{i.toolName}</td>
                      <td>
                        <span class={`tag status ${i.status}`}>{i.status}</span>
                      </td>
                      <td>{formatDuration(i.durationMs)}</td>
                      <td>
                        <Snippet text={snippet} />
                      </td>
                      <td>
                        <a href={hrefOf({ page: 'conversation', tenant, conversation: i.conversationId })}>{i.conversationId}</a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Await>
      ) : null}
    </main>
  );
}
