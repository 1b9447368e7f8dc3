const MARKER = /(\[REDACTED:[^\]]{1,80}\])/;

/** A stored value as indented JSON, with each redaction marker shown as one. */
export function JsonView({ value }: { value: unknown }) {
  const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
  if (text === undefined) return <pre class="json">—</pre>;
  return (
    <pre class="json">
      {text.split(MARKER).map((part, i) =>
        i % 2 === 1 ? (
          <mark class="redaction" title="redacted when recorded">
            {part}
          </mark>
        ) : (
          part
        ),
      )}
    </pre>
  );
}

/** A search snippet: matched words arrive wrapped in ** **. */
export function Snippet({ text }: { text: string }) {
  return <span class="snippet">{text.split('**').map((part, i) => (i % 2 === 1 ? <mark>{part}</mark> : part))}</span>;
}

export function RedactionCounts({ counts }: { counts: Record<string, number> }) {
  const entries = Object.entries(counts);
  if (entries.length === 0) return null;
  return (
    <span class="redaction-counts">
      {entries.map(([kind, n]) => (
        <span class="tag redaction" key={kind}>
          {n} × {kind}
        </span>
      ))}
    </span>
  );
}
