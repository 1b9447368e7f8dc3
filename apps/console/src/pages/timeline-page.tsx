import { useEffect, useState } from 'preact/hooks';
import type { ConversationTimelineView, ConversationWatchEvent, TimelineCallView, TimelineRunView } from '@toolhistory/console-api';
import { followEvents, segment } from '../api';
import { formatDuration, formatTime, OMISSION_REASONS } from '../components/format';
import { JsonView, RedactionCounts } from '../components/json-view';
import { Await } from '../components/notice';
import { navigate } from '../route';
import { useApi } from '../use-api';

const MINUTE = 60_000;

function Verdict({ call }: { call: TimelineCallView }) {
  const { replay } = call;
  if (replay.kept) {
    const label = replay.invalidatedBy
      ? 'replayed as a notice: invalidated'
      : replay.expired
        ? 'replayed as a notice: expired'
        : 'replayed';
    return <span class={`verdict ${replay.expired || replay.invalidatedBy ? 'notice-kept' : 'kept'}`}>{label}</span>;
  }
  // Not a rule's verdict: at that moment the call had not happened yet.
  if (replay.reason === 'not_yet_recorded') return <span class="verdict later">not yet recorded at this moment</span>;
  return (
    <span class="verdict left-out" title={replay.reason}>
      left out: {OMISSION_REASONS[replay.reason] ?? replay.reason}
      {replay.invalidatedBy ? ` (${replay.invalidatedBy})` : ''}
    </span>
  );
}

function CallRow({ call }: { call: TimelineCallView }) {
  const { invocation: i } = call;
  return (
    <details class={`call status-${i.status}`} data-testid="timeline-call">
      <summary>
        <span class="seq">#{i.sequenceIndex}</span>
        <span class="tool">{i.toolName ?? '(no call recorded)'}</span>
        <span class={`tag status ${i.status}`}>{i.status}</span>
        <span class="duration">{formatDuration(i.durationMs)}</span>
        <RedactionCounts counts={sumInto(i.argumentRedactions, i.resultRedactions)} />
        <Verdict call={call} />
      </summary>
      <div class="call-body">
        <dl>
          <dt>tool call id</dt>
          <dd>{i.toolCallId || '—'}</dd>
          <dt>requested</dt>
          <dd>{formatTime(i.requestedAt)}</dd>
          <dt>completed</dt>
          <dd>{formatTime(i.completedAt)}</dd>
          <dt>kept</dt>
          <dd>{i.persist}</dd>
          {i.traceId && (
            <>
              <dt>trace</dt>
              <dd>{i.traceId}</dd>
            </>
          )}
        </dl>
        <h4>Arguments</h4>
        <JsonView value={i.arguments} />
        <h4>Result</h4>
        <JsonView value={i.status === 'pending' ? '(no result yet)' : i.result} />
      </div>
    </details>
  );
}

function sumInto(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const sum = { ...b };
  for (const [k, n] of Object.entries(a)) sum[k] = (sum[k] ?? 0) + n;
  return sum;
}

function RunSection({ run }: { run: TimelineRunView }) {
  return (
    <section class="run" data-testid="timeline-run">
      <h3>
        Run <code>{run.runId}</code> <span class={`tag run-status ${run.status}`}>{run.status}</span>
        <small>
          {formatTime(run.startedAt)}
          {run.endedAt ? ` – ${formatTime(run.endedAt)}` : ''}
          {run.finishReason ? ` · ${run.finishReason}` : ''}
        </small>
      </h3>
      {run.error ? (
        <p class="run-error">
          {run.error.code}: {run.error.message}
        </p>
      ) : null}
      {run.rounds.map((round) => (
        <div class="round" key={round.roundIndex}>
          <h4>Round {round.roundIndex}</h4>
          {round.calls.map((call) => (
            <CallRow call={call} key={`${call.invocation.sequenceIndex}/${call.invocation.toolCallId}`} />
          ))}
        </div>
      ))}
    </section>
  );
}

/** The as-of slider: from a minute before the first invocation to an hour after the later of the last one and now. */
function AsOfSlider({ timeline, onPick }: { timeline: ConversationTimelineView; onPick: (iso: string | undefined) => void }) {
  const asOf = Date.parse(timeline.asOf);
  const first = timeline.firstAt ? Date.parse(timeline.firstAt) - MINUTE : asOf - 60 * MINUTE;
  const last = Math.max(timeline.lastAt ? Date.parse(timeline.lastAt) : asOf, Date.now(), asOf) + 60 * MINUTE;
  const [value, setValue] = useState(asOf);
  return (
    <div class="as-of">
      <label for="as-of">
        Replay as of <strong data-testid="as-of-label">{formatTime(new Date(value).toISOString())}</strong>
      </label>
      <input
        id="as-of"
        type="range"
        min={first}
        max={last}
        step={1_000}
        value={value}
        onInput={(e) => setValue(Number((e.target as HTMLInputElement).value))}
        onChange={(e) => onPick(new Date(Number((e.target as HTMLInputElement).value)).toISOString())}
      />
      <button type="button" onClick={() => onPick(undefined)}>
        Now
      </button>
    </div>
  );
}

type Live = 'connecting' | 'live' | 'erased' | 'off';

/**
 * Viewing "now" (no as-of moment), the page follows the conversation's
 * watch stream: each change asks for the timeline again, so a call shows
 * pending, then its result, and a run its end, without a reload, with
 * replay's verdicts as the service computes them. A past moment does not
 * change, so it is not followed.
 */
function useLiveRevision(tenant: string, conversation: string, follow: boolean): { revision: number; live: Live } {
  const [revision, setRevision] = useState(0);
  const [live, setLive] = useState<Live>('off');
  useEffect(() => {
    if (!follow) return setLive('off');
    const controller = new AbortController();
    setLive('connecting');
    const path = `tenants/${segment(tenant)}/conversations/${segment(conversation)}/watch`;
    followEvents<ConversationWatchEvent>(
      path,
      (message) => {
        switch (message.event) {
          case 'snapshot':
            if (message.data.complete) setLive('live');
            return;
          case 'change':
            return setRevision((r) => r + 1);
          case 'ended':
            setLive(message.data.reason === 'erased' ? 'erased' : 'off');
            return setRevision((r) => r + 1);
        }
      },
      controller.signal,
    ).then(
      () => setLive((l) => (l === 'erased' ? l : 'off')),
      () => setLive((l) => (controller.signal.aborted || l === 'erased' ? l : 'off')),
    );
    return () => controller.abort();
  }, [tenant, conversation, follow]);
  return { revision, live };
}

const LIVE_LABELS: Record<Live, string> = {
  connecting: 'connecting…',
  live: 'live',
  erased: 'erased',
  off: 'not live',
};

export function TimelinePage({ tenant, conversation, asOf }: { tenant: string; conversation: string; asOf?: string }) {
  const { revision, live } = useLiveRevision(tenant, conversation, asOf === undefined);
  const loaded = useApi<ConversationTimelineView>(
    `tenants/${segment(tenant)}/conversations/${segment(conversation)}/timeline`,
    { asOf },
    revision,
  );
  return (
    <main>
      <h2>
        Conversation <code>{conversation}</code>{' '}
        {asOf === undefined ? (
          <span class={`tag live ${live}`} data-testid="live-status">
            {LIVE_LABELS[live]}
          </span>
        ) : null}
      </h2>
      {live === 'erased' ? <p class="notice">This conversation was erased.</p> : null}
      <Await loaded={loaded}>
        {(timeline) => (
          <>
            <AsOfSlider
              key={timeline.asOf}
              timeline={timeline}
              onPick={(picked) => navigate({ page: 'conversation', tenant, conversation, asOf: picked })}
            />
            <p class="summary" data-testid="timeline-summary">
              {timeline.kept} call(s) replayed, {timeline.omitted} left out, {timeline.historyTokens} tokens of history
              {timeline.notYetRecorded > 0 ? `; ${timeline.notYetRecorded} not yet recorded at this moment` : ''}
              {timeline.truncated ? '; only the first 5,000 invocations are shown' : ''}
            </p>
            {timeline.runs.length === 0 ? <p class="notice">Nothing is recorded for this conversation.</p> : null}
            {timeline.runs.map((run) => (
              <RunSection run={run} key={run.runId} />
            ))}
          </>
        )}
      </Await>
    </main>
  );
}
