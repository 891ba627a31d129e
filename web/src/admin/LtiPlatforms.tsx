// A twin's LTI 1.3 platforms (course platforms such as Moodle or Canvas), under its settings for those
// holding sso.edit there: the list, a platform registered, edited and removed, and the two tool URLs to
// give the platform. The service's field errors show at the field (SimpleForm); the courses a platform
// may open are the twin's own setting (its course context ids, in the twin's form).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { adminGet, adminSend, type Page } from './admin-api';
import type { FieldSpec } from './form-body';
import { EditButton, SimpleForm } from './SimpleForm';
import { DataTable, type Column } from './ui';

export interface LtiPlatform {
  _id: string;
  issuer: string;
  clientId: string;
  authLoginUrl: string;
  jwksUrl: string;
  deploymentIds: string[];
  toolLoginUrl: string;
  toolLaunchUrl: string;
}

const FIELDS: FieldSpec[] = [
  { name: 'issuer', label: 'Issuer (iss)', type: 'url', hint: 'As the platform writes it, e.g. https://lms.example.edu' },
  { name: 'clientId', label: 'Client id the platform gave this tool' },
  { name: 'authLoginUrl', label: 'Platform authorization URL', type: 'url' },
  { name: 'jwksUrl', label: 'Platform public keys (JWKS) URL', type: 'url' },
  { name: 'deploymentIds', label: 'Deployment ids (comma-separated)', type: 'list', hint: 'None: the platform cannot launch yet.' },
];

const QUERY_KEY = 'admin-lti-platforms';

const PLATFORM_COLUMNS: Column<LtiPlatform>[] = [
  { header: 'Issuer', cell: (platform) => platform.issuer },
  { header: 'Client id', cell: (platform) => platform.clientId },
  { header: 'Deployments', cell: (platform) => platform.deploymentIds.join(', ') || 'none' },
];

export function LtiPlatforms({ twinId }: { twinId: string }) {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: [QUERY_KEY, twinId], queryFn: () => adminGet<Page<LtiPlatform>>('/api/admin/lti-platforms', { institutionId: twinId, limit: 100 }) });
  const [editing, setEditing] = useState<LtiPlatform | null>(null);
  const [removing, setRemoving] = useState<LtiPlatform | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const rows = list.data?.data ?? [];
  const remove = async (platform: LtiPlatform) => {
    setError(null);
    setOutcome(null);
    try {
      await adminSend('DELETE', `/api/admin/lti-platform/${platform._id}`);
      setRemoving(null);
      if (editing?._id === platform._id) setEditing(null);
      setOutcome(`Removed ${platform.issuer}.`);
      await queryClient.invalidateQueries({ queryKey: [QUERY_KEY] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section className="lti-platforms" aria-labelledby="lti-platforms-title">
      <h3 id="lti-platforms-title">Course platforms (LTI 1.3)</h3>
      <p>A registered platform opens this twin from the courses listed in its course context ids.</p>
      <ErrorNotice error={list.error} />
      {rows.length > 0 && (
        <>
          <dl className="lti-tool-urls">
            <dt>Tool login URL (login initiation)</dt>
            <dd>
              <code>{rows[0].toolLoginUrl}</code>
            </dd>
            <dt>Tool launch URL (redirect and target link URI)</dt>
            <dd>
              <code>{rows[0].toolLaunchUrl}</code>
            </dd>
          </dl>
          <DataTable
            caption="Registered course platforms"
            rows={rows}
            columns={PLATFORM_COLUMNS}
            rowActions={(platform) => (
              <span className="button-row">
                <EditButton label={platform.issuer} onClick={() => setEditing(platform)} />
                <button type="button" className="button-link" onClick={() => setRemoving(platform)}>
                  Remove<span className="visually-hidden"> {platform.issuer}</span>
                </button>
              </span>
            )}
          />
        </>
      )}
      {list.isSuccess && rows.length === 0 && <p className="muted">No platform is registered yet.</p>}
      {removing && (
        <div className="button-row" role="group" aria-label="Confirm removal">
          <span>Remove {removing.issuer}? Its courses stop opening this twin.</span>
          <button type="button" className="button-danger" onClick={() => void remove(removing)}>
            Remove platform
          </button>
          <button type="button" className="button-secondary" onClick={() => setRemoving(null)}>
            Keep it
          </button>
        </div>
      )}
      {outcome && <p role="status">{outcome}</p>}
      <ErrorNotice error={error} />
      {editing && (
        <SimpleForm
          key={editing._id}
          title={`Edit ${editing.issuer}`}
          submitLabel="Save platform"
          invalidate={QUERY_KEY}
          record={editing as unknown as Record<string, unknown>}
          send={(body) => adminSend('PUT', `/api/admin/lti-platform/${editing._id}`, body)}
          done={() => 'Saved.'}
          fields={FIELDS}
          onClose={() => setEditing(null)}
        />
      )}
      <SimpleForm
        title="Register a course platform"
        submitLabel="Register platform"
        invalidate={QUERY_KEY}
        send={(body) => adminSend('POST', '/api/admin/lti-platform', { deploymentIds: [], ...body, institution: twinId })}
        done={(body) => `Registered ${body.issuer}.`}
        fields={FIELDS}
      />
    </section>
  );
}
