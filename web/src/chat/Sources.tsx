// The retrieval sources of an answer (its history record's ragSearch), read when opened; confidential
// passages arrive redacted and are labelled so.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';

/** Answers whose sources the person opened: the live answer is replaced by its saved record once the
 * history is read again, and the list stays open across that, even when the click came just before. */
const opened = new Set<string>();

export function Sources({ historyId, count }: { historyId: string; count?: number }) {
  const [open, setOpen] = useState(() => opened.has(historyId));
  const record = useQuery({
    queryKey: ['history', 'record', historyId],
    queryFn: () => unwrap(api.GET('/api/user/history/{id}', { params: { path: { id: historyId } } })),
    enabled: open,
  });
  const sources = record.data?.data.ragSearch ?? [];
  return (
    <details
      className="sources"
      open={open}
      onToggle={(event) => {
        const isOpen = (event.target as HTMLDetailsElement).open;
        if (isOpen) opened.add(historyId);
        else opened.delete(historyId);
        setOpen(isOpen);
      }}
    >
      <summary
        onClick={(event) => {
          // Kept at once, not at the toggle event that follows: the live answer may give way to its saved
          // record in between, and the list must open there too.
          const details = event.currentTarget.parentElement as HTMLDetailsElement;
          if (details.open) opened.delete(historyId);
          else opened.add(historyId);
        }}
      >
        Sources{count ? ` (${count})` : ''}
      </summary>
      <ErrorNotice error={record.error} />
      {record.data?.data.detailsExpired && <p>{record.data.data.detailsNotice ?? 'Details expired after 180 days'}</p>}
      <ol>
        {sources.map((source) => (
          <li key={`${source.uploadId}-${source.chunkIndex}`}>
            <strong>{source.originalname}</strong> <span className="muted">passage {source.chunkIndex + 1}</span>
            {source.confidential && <span className="badge">Redacted</span>}
            <blockquote>{source.chunkText}</blockquote>
          </li>
        ))}
      </ol>
    </details>
  );
}
