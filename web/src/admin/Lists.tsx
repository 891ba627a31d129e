// The families shown as a list with their bulk delete: histories (with each record's retrieval
// segments, or the notice that its detail expired), sessions, feedback, uploads, and the credits ledger
// of the current twin. Delete is offered only where the profile's permissions allow it (families.ts).
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { AdminFeedback, AdminHistory, AdminSession, AdminUpload, LedgerEntry } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile } from '../session';
import { adminSend, bulkDelete } from './admin-api';
import { SimpleForm } from './SimpleForm';
import { actionsFor, FAMILIES, type FamilyKey } from './families';
import { AdminList, formatDate, type BulkAction } from './ui';

const remove = (family: string): BulkAction[] => [{ label: 'Delete', run: (ids) => bulkDelete(family, ids), danger: true }];

export default function Lists({ family }: { family: FamilyKey }) {
  const profile = useProfile();
  const can = actionsFor(profile);
  const title = FAMILIES.find((entry) => entry.key === family)?.label ?? family;
  const list = (() => {
    switch (family) {
      case 'histories':
        return (
          <AdminList<AdminHistory>
            title={title}
            path="/api/admin/histories"
            queryKey="admin-histories"
            searchable={false}
            rowLabel={(row) => row.question}
            bulk={can.histories.remove ? remove('histories') : []}
            columns={[
              { header: 'Question', cell: (row) => row.question },
              { header: 'Person', cell: (row) => row.userEmail ?? '' },
              { header: 'When', cell: (row) => formatDate(row.created) },
              { header: 'Retrieval', cell: (row) => <Segments record={row} /> },
            ]}
          />
        );
      case 'sessions':
        return (
          <AdminList<AdminSession>
            title={title}
            path="/api/admin/sessions"
            queryKey="admin-sessions"
            searchable={false}
            rowLabel={(row) => `session ${row._id}`}
            bulk={can.sessions.remove ? [{ label: 'Revoke', run: (ids) => bulkDelete('sessions', ids), danger: true }] : []}
            columns={[
              { header: 'Person', cell: (row) => row.user.email },
              { header: 'Kind', cell: (row) => row.kind },
              { header: 'Address', cell: (row) => row.ip ?? '' },
              { header: 'Opened', cell: (row) => formatDate(row.created) },
              { header: 'Expires', cell: (row) => formatDate(row.expires) },
            ]}
          />
        );
      case 'feedback':
        return (
          <AdminList<AdminFeedback>
            title={title}
            path="/api/admin/feedback"
            queryKey="admin-feedback"
            searchable={false}
            rowLabel={(row) => `feedback of ${row.userEmail ?? row.user}`}
            bulk={can.feedback.remove ? remove('feedback') : []}
            columns={[
              { header: 'Rating', cell: (row) => row.rating },
              { header: 'Comment', cell: (row) => row.comment },
              { header: 'Person', cell: (row) => row.userEmail ?? '' },
              { header: 'Status', cell: (row) => row.status },
              { header: 'When', cell: (row) => formatDate(row.created) },
            ]}
            rowActions={can.feedback.review ? (row) => <Review feedback={row} /> : undefined}
          />
        );
      case 'uploads':
        return (
          <AdminList<AdminUpload>
            title={title}
            path="/api/admin/uploads"
            queryKey="admin-uploads"
            searchable={false}
            rowLabel={(row) => row.originalname}
            bulk={can.uploads.remove ? remove('uploads') : []}
            columns={[
              { header: 'File', cell: (row) => row.originalname },
              { header: 'Status', cell: (row) => row.status },
              { header: 'Size', cell: (row) => row.size },
              { header: 'Uploaded', cell: (row) => formatDate(row.created) },
            ]}
          />
        );
      case 'credits':
        return profile.institution ? (
          <>
          {can.credits.award && (
            <SimpleForm
              title="Award free credits to this twin"
              submitLabel="Award credits"
              invalidate="admin-ledger"
              send={(body) => adminSend('PUT', `/api/admin/freeInstitutionCreditsById/${profile.institution!._id}`, body)}
              done={(body) => `Awarded ${body.credits} credits.`}
              fields={[{ name: 'credits', label: 'Credits', type: 'number' }]}
            />
          )}
          <AdminList<LedgerEntry>
            title="Credits ledger"
            path={`/api/admin/institution/${profile.institution._id}/credits/ledger`}
            queryKey="admin-ledger"
            searchable={false}
            rowLabel={(row) => row._id}
            columns={ledgerColumns}
          />
          </>
        ) : (
          <p>You are in no twin.</p>
        );
      default:
        return null;
    }
  })();
  return (
    <>
      <h1>{title}</h1>
      {list}
    </>
  );
}

const ledgerColumns = [
  { header: 'When', cell: (row: LedgerEntry) => formatDate(row.created) },
  { header: 'Change', cell: (row: LedgerEntry) => row.delta },
  { header: 'Balance after', cell: (row: LedgerEntry) => row.balanceAfter },
  { header: 'Reason', cell: (row: LedgerEntry) => row.reason },
];

/** Marks a feedback row reviewed (or new again). */
function Review({ feedback }: { feedback: AdminFeedback }) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<unknown>(null);
  const next = feedback.status === 'reviewed' ? 'new' : 'reviewed';
  return (
    <>
      <button
        type="button"
        className="button-link"
        onClick={async () => {
          setError(null);
          try {
            await adminSend('PUT', `/api/admin/feedback/${feedback._id}`, { status: next });
            await queryClient.invalidateQueries({ queryKey: ['admin-feedback'] });
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        {next === 'reviewed' ? 'Mark reviewed' : 'Mark new'}
      </button>
      <ErrorNotice error={error} />
    </>
  );
}

/** A record's retrieval segments, read when asked; an expired record says so instead. */
function Segments({ record }: { record: AdminHistory }) {
  const [segments, setSegments] = useState<Array<{ originalname: string; chunkText: string }> | null>(null);
  const [error, setError] = useState<unknown>(null);
  if (record.detailsExpired) return <span>{record.detailsNotice ?? 'Details expired after 180 days'}</span>;
  if (!record.hasRagSearch) return <span className="muted">none</span>;
  if (segments)
    return (
      <ul className="segments">
        {segments.map((segment, index) => (
          <li key={index}>
            <strong>{segment.originalname}</strong>: {segment.chunkText}
          </li>
        ))}
      </ul>
    );
  return (
    <>
      <button
        type="button"
        className="button-link"
        onClick={async () => {
          try {
            setSegments((await unwrap(api.GET('/api/admin/history/{id}/ragSearch', { params: { path: { id: record._id } } }))).ragSearch);
          } catch (failure) {
            setError(failure);
          }
        }}
      >
        {record.ragSearchCount} segments<span className="visually-hidden"> of “{record.question}”</span>
      </button>
      <ErrorNotice error={error} />
    </>
  );
}
