// Twins: the list the admin may see (super admins: activate, deactivate, delete many), and the settings
// of one twin (the current one first): guardrails, memory, reasoning, usage caps, voice and embedding
// switches, authorized URLs, course context ids and, for holders of sso.edit, its LTI platforms; super
// admins also set its account. Each field shows the service's error.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import type { AdminTwin } from '../api/types';
import { ErrorNotice } from '../components/ErrorNotice';
import { useProfile } from '../session';
import { adminSend, fieldErrors } from './admin-api';
import { SimpleForm } from './SimpleForm';
import { EmbedSnippet } from './EmbedSnippet';
import { actionsFor, isSuper } from './families';
import { LtiPlatforms } from './LtiPlatforms';
import { AdminList, Field, type BulkAction } from './ui';

const bulk = (action: 'activate' | 'deactivate' | 'delete') => (ids: string[]) => unwrap(api.POST('/api/admin/institutions/bulk', { body: { action, ids } }));
type Settings = Pick<
  AdminTwin,
  | 'guardrailsEnabled'
  | 'guardrailsText'
  | 'longTermMemoryEnabled'
  | 'memoryAdminsOnly'
  | 'defaultMemoryMode'
  | 'reasoningEffort'
  | 'userDailyLimit'
  | 'twinDailyLimit'
  | 'rtEnabled'
  | 'rtAdminOnly'
  | 'embedGuidanceEnabled'
  | 'liveTranscriptEnabled'
  | 'publicAuthorizedUrls'
  | 'ltiContextIds'
>;

const SETTING_KEYS = [
  'guardrailsEnabled',
  'guardrailsText',
  'longTermMemoryEnabled',
  'memoryAdminsOnly',
  'defaultMemoryMode',
  'reasoningEffort',
  'userDailyLimit',
  'twinDailyLimit',
  'rtEnabled',
  'rtAdminOnly',
  'embedGuidanceEnabled',
  'liveTranscriptEnabled',
  'publicAuthorizedUrls',
  'ltiContextIds',
] as const satisfies readonly (keyof Settings)[];

const settingsOf = (twin: AdminTwin): Settings => Object.fromEntries(SETTING_KEYS.map((key) => [key, twin[key]])) as Settings;

export default function Twins() {
  const profile = useProfile();
  const can = actionsFor(profile).twins;
  const [editing, setEditing] = useState<string | null>(profile.institution?._id ?? null);
  const actions: BulkAction[] = [];
  if (can.edit) actions.push({ label: 'Activate', run: bulk('activate') }, { label: 'Deactivate', run: bulk('deactivate') });
  if (can.remove) actions.push({ label: 'Delete', run: bulk('delete'), danger: true });
  return (
    <>
      <h1>Twins</h1>
      {can.create && (
        <SimpleForm
          title="Create a twin"
          submitLabel="Create twin"
          invalidate="admin-twins"
          send={(body) => adminSend('POST', '/api/admin/institution', body)}
          done={(body) => `Created ${body.name}.`}
          fields={[
            { name: 'name', label: 'Twin name' },
            { name: 'ainame', label: 'AI name' },
            { name: 'contactEmail', label: 'Contact email', type: 'email' },
          ]}
        />
      )}
      {/* The profile's permissions are those of the current twin: the platforms of another only for super admins. */}
      {editing && <TwinSettings id={editing} editable={can.edit} setsAccount={can.setAccount} platforms={can.ltiPlatforms && (isSuper(profile) || editing === profile.institution?._id)} />}
      <AdminList<AdminTwin>
        title="Twins"
        path="/api/admin/institutions"
        queryKey="admin-twins"
        rowLabel={(row) => row.name}
        bulk={actions}
        columns={[
          { header: 'Name', cell: (row) => row.name },
          { header: 'AI name', cell: (row) => row.ainame },
          { header: 'Status', cell: (row) => row.status },
          { header: 'Credits', cell: (row) => row.credits },
        ]}
        rowActions={(row) => (
          <button type="button" className="button-link" onClick={() => setEditing(row._id)}>
            Settings<span className="visually-hidden"> of {row.name}</span>
          </button>
        )}
      />
    </>
  );
}

function TwinSettings({ id, editable, setsAccount, platforms }: { id: string; editable: boolean; setsAccount: boolean; platforms: boolean }) {
  const queryClient = useQueryClient();
  const twin = useQuery({ queryKey: ['admin-twin', id], queryFn: () => unwrap(api.GET('/api/admin/institution/{id}', { params: { path: { id } } })) });
  const [form, setForm] = useState<Settings | null>(null);
  const [urls, setUrls] = useState('');
  const [courses, setCourses] = useState('');
  const [accountId, setAccountId] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const data = twin.data?.data;
  useEffect(() => {
    if (!data) return;
    setForm(settingsOf(data));
    setUrls(data.publicAuthorizedUrls.join('\n'));
    setCourses(data.ltiContextIds.join('\n'));
    setAccountId(data.accountId ?? '');
  }, [data]);
  const errors = fieldErrors(error);
  if (!form || !data) return <ErrorNotice error={twin.error} />;
  const set = <K extends keyof Settings>(key: K, value: Settings[K]) => setForm({ ...form, [key]: value });
  const limit = (value: string) => (value.trim() === '' ? null : Number(value));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSaved(false);
    try {
      const lines = (text: string) => text.split('\n').map((line) => line.trim()).filter(Boolean);
      const body = { ...form, publicAuthorizedUrls: lines(urls), ltiContextIds: lines(courses), ...(setsAccount ? { accountId: accountId || null } : {}) };
      await unwrap(api.PUT('/api/admin/institution/{id}', { params: { path: { id } }, body }));
      setSaved(true);
      await queryClient.invalidateQueries({ queryKey: ['admin-twin', id] });
      await queryClient.invalidateQueries({ queryKey: ['admin-twins'] });
    } catch (failure) {
      setError(failure);
    }
  };
  const toggle = (key: 'guardrailsEnabled' | 'longTermMemoryEnabled' | 'memoryAdminsOnly' | 'rtEnabled' | 'rtAdminOnly' | 'embedGuidanceEnabled' | 'liveTranscriptEnabled', label: string) => (
    <label className="switch">
      <input type="checkbox" role="switch" checked={form[key]} disabled={!editable} onChange={(event) => set(key, event.target.checked)} />
      {label}
    </label>
  );
  return (
    <section className="card" aria-labelledby="twin-settings">
      <h2 id="twin-settings">Settings of {data.name}</h2>
      <form onSubmit={submit} className="stack-form" noValidate>
        <fieldset>
          <legend>Guardrails</legend>
          {toggle('guardrailsEnabled', 'Guardrail instructions on')}
          <Field label="Guardrail instructions" error={errors.guardrailsText}>
            {(props) => <textarea rows={3} {...props} disabled={!editable} value={form.guardrailsText} onChange={(event) => set('guardrailsText', event.target.value)} />}
          </Field>
        </fieldset>
        <fieldset>
          <legend>Memory and reasoning</legend>
          {toggle('longTermMemoryEnabled', 'Long-term memory')}
          {toggle('memoryAdminsOnly', 'Admins only')}
          <Field label="Default memory mode" error={errors.defaultMemoryMode}>
            {(props) => (
              <select {...props} disabled={!editable} value={form.defaultMemoryMode} onChange={(event) => set('defaultMemoryMode', event.target.value as Settings['defaultMemoryMode'])}>
                <option value="off">Off</option>
                <option value="session">Session</option>
                <option value="long_term">Long-term</option>
              </select>
            )}
          </Field>
          <Field label="Reasoning effort" error={errors.reasoningEffort}>
            {(props) => (
              <select {...props} disabled={!editable} value={form.reasoningEffort} onChange={(event) => set('reasoningEffort', event.target.value as Settings['reasoningEffort'])}>
                {['off', 'minimal', 'low', 'medium', 'high'].map((value) => (
                  <option key={value} value={value}>
                    {value}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </fieldset>
        <fieldset>
          <legend>Usage caps (turns per 24 hours; empty for none)</legend>
          <Field label="Per person" error={errors.userDailyLimit}>
            {(props) => <input type="number" min={0} {...props} disabled={!editable} value={form.userDailyLimit ?? ''} onChange={(event) => set('userDailyLimit', limit(event.target.value))} />}
          </Field>
          <Field label="For the whole twin" error={errors.twinDailyLimit}>
            {(props) => <input type="number" min={0} {...props} disabled={!editable} value={form.twinDailyLimit ?? ''} onChange={(event) => set('twinDailyLimit', limit(event.target.value))} />}
          </Field>
        </fieldset>
        <fieldset>
          <legend>Voice and embedding</legend>
          {toggle('rtEnabled', 'Voice conversations')}
          {toggle('rtAdminOnly', 'Voice for administrators only')}
          {toggle('embedGuidanceEnabled', 'Embedding page may guide live conversations')}
          {toggle('liveTranscriptEnabled', 'Live transcript events for embedding pages')}
          <Field label="Authorized URLs (one per line)" error={errors.publicAuthorizedUrls}>
            {(props) => <textarea rows={3} {...props} disabled={!editable} value={urls} onChange={(event) => setUrls(event.target.value)} />}
          </Field>
          <EmbedSnippet publicId={data.publicId} authorizedUrls={data.publicAuthorizedUrls} />
          <Field label="Course context ids a course platform may open this twin from (one per line)" error={errors.ltiContextIds}>
            {(props) => <textarea rows={2} {...props} disabled={!editable} value={courses} onChange={(event) => setCourses(event.target.value)} />}
          </Field>
        </fieldset>
        {setsAccount && (
          <Field label="Account id (empty for none)" error={errors.accountId}>
            {(props) => <input {...props} value={accountId} onChange={(event) => setAccountId(event.target.value)} />}
          </Field>
        )}
        {editable && <button type="submit">Save settings</button>}
        {saved && <p role="status">Saved.</p>}
        <ErrorNotice error={error} />
      </form>
      {platforms && <LtiPlatforms twinId={id} />}
    </section>
  );
}
