import type { DeadLettersView } from '@toolhistory/console-api';
import { formatTime } from '../components/format';
import { JsonView } from '../components/json-view';
import { Await } from '../components/notice';
import { useApi } from '../use-api';

/** What the recorder could not record, newest first; redriving stays with the CLI (`toolhistory dlq redrive`). */
export function DeadLettersPage() {
  const loaded = useApi<DeadLettersView>('dead-letters');
  return (
    <main>
      <h2>Dead letters of the last 7 days</h2>
      <p class="hint">
        Values are shown as dead-lettered, with every detector applied. Redrive them with <code>toolhistory dlq redrive</code> once the
        cause is fixed.
      </p>
      <Await loaded={loaded}>
        {({ letters }) =>
          letters.length === 0 ? (
            <p class="notice">No dead letter.</p>
          ) : (
            letters.map((l) => (
              <details class="letter" data-testid="dead-letter" key={l.place}>
                <summary>
                  <span class="tag error-code">{l.errorCode}</span>
                  <span class="reason">{l.reason}</span>
                  <small>
                    {formatTime(l.deadLetteredAt)} · from {l.original.topic} {l.original.partition}:{l.original.offset}
                    {l.redriven ? ' · redriven' : ''}
                  </small>
                </summary>
                <dl>
                  <dt>place</dt>
                  <dd>{l.place}</dd>
                  <dt>key</dt>
                  <dd>{l.key ?? '—'}</dd>
                </dl>
                <JsonView value={l.stub ? '(only its origin and size were kept)' : (l.value ?? '')} />
              </details>
            ))
          )
        }
      </Await>
    </main>
  );
}
