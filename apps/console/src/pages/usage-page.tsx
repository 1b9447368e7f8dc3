import { useEffect, useMemo, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import type { UsageView } from '@toolhistory/console-api';
import { segment } from '../api';
import { formatDuration } from '../components/format';
import { Await } from '../components/notice';
import { hrefOf } from '../route';
import { useApi } from '../use-api';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

const DAY = 86_400_000;
/** Distinct from one another on white and in grey print. */
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

function bucketLabel(iso: string, bucket: 'hour' | 'day'): string {
  return bucket === 'day' ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

/** Calls per tool and period, stacked; errors and durations are in the table below. */
function UsageChart({ usage }: { usage: UsageView }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const data = useMemo(() => {
    // Every period of the span, empty ones too, so the axis is time as it passed.
    const step = usage.bucket === 'day' ? DAY : 3_600_000;
    const buckets: string[] = [];
    for (let t = Math.floor(Date.parse(usage.from) / step) * step; t < Date.parse(usage.to); t += step)
      buckets.push(new Date(t).toISOString());
    const key = (iso: string) => Math.floor(Date.parse(iso) / step);
    const tools = [...new Set(usage.rows.map((r) => r.toolName))].sort();
    const calls = new Map(usage.rows.map((r) => [`${r.toolName}\u0000${key(r.bucketStart)}`, r.calls]));
    return {
      labels: buckets.map((b) => bucketLabel(b, usage.bucket)),
      datasets: tools.map((tool, i) => ({
        label: tool,
        data: buckets.map((b) => calls.get(`${tool}\u0000${key(b)}`) ?? 0),
        backgroundColor: PALETTE[i % PALETTE.length],
      })),
    };
  }, [usage]);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data,
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: { stacked: true, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 12 } },
          y: { stacked: true, beginAtZero: true, title: { display: true, text: 'calls' } },
        },
        plugins: { legend: { position: 'bottom' } },
      },
    });
    return () => chart.destroy();
  }, [data]);
  return (
    <div class="chart">
      <canvas ref={canvas} role="img" aria-label="calls per tool over time" data-testid="usage-chart" />
    </div>
  );
}

export function UsagePage({ tenant, bucket = 'hour', days = '1' }: { tenant: string; bucket?: string; days?: string }) {
  const span = Number(days) > 0 ? Number(days) : 1;
  // Whole buckets: from the start of the current hour (or day) back.
  const to = useMemo(() => {
    const unit = bucket === 'day' ? DAY : 3_600_000;
    return new Date(Math.ceil(Date.now() / unit) * unit).toISOString();
  }, [bucket]);
  const from = new Date(Date.parse(to) - span * DAY).toISOString();
  const loaded = useApi<UsageView>(`tenants/${segment(tenant)}/usage`, { bucket, from, to });
  return (
    <main>
      <h2>Usage of {tenant}</h2>
      <nav class="choices">
        {[
          ['hour', '1', 'last day by hour'],
          ['hour', '7', 'last 7 days by hour'],
          ['day', '30', 'last 30 days by day'],
        ].map(([b, d, label]) => (
          <a
            key={label}
            class={b === bucket && d === String(span) ? 'current' : ''}
            href={hrefOf({ page: 'usage', tenant, bucket: b, days: d })}
          >
            {label}
          </a>
        ))}
      </nav>
      <Await loaded={loaded}>
        {(usage) =>
          usage.rows.length === 0 ? (
            <p class="notice">No tool call in this period.</p>
          ) : (
            <>
              <UsageChart usage={usage} />
              <p class="summary">
                calls: {usage.rows.reduce((n, r) => n + r.calls, 0)}, errors: {usage.rows.reduce((n, r) => n + r.errors, 0)}; tokens of
                completed runs: {usage.inputTokens} in, {usage.outputTokens} out
              </p>
              <table data-testid="usage-table">
                <thead>
                  <tr>
                    <th>Period</th>
                    <th>Tool</th>
                    <th>Calls</th>
                    <th>Errors</th>
                    <th>p50</th>
                    <th>p95</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.rows.map((r) => (
                    <tr key={`${r.bucketStart}/${r.toolName}`}>
                      <td>{bucketLabel(r.bucketStart, usage.bucket)}</td>
                      <td>{r.toolName}</td>
                      <td>{r.calls}</td>
                      <td>{r.errors}</td>
                      <td>{formatDuration(r.p50DurationMs)}</td>
                      <td>{formatDuration(r.p95DurationMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )
        }
      </Await>
    </main>
  );
}
