// The families whose records are settings an administrator adds and edits: assistants (edited where the
// service says the caller may: each row's canEdit), AI models (a deployment-wide one by super admins
// only), SSO providers, entitlements and accounts (super admins). Secrets are typed, sent once and never
// shown: an empty secret field keeps the stored one. Each edit form starts from the record and sends
// what changed; the service's field errors show at the field.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { Account, AdminAssistant, AdminModel, Entitlement, SsoProvider } from '../api/types';
import { useProfile } from '../session';
import { adminGet, adminSend, bulkDelete, type Page } from './admin-api';
import { actionsFor, FAMILIES, isSuper, type FamilyKey } from './families';
import type { FieldSpec } from './form-body';
import { EditButton, SimpleForm } from './SimpleForm';
import { AdminList, formatDate, type BulkAction } from './ui';

const remove = (family: string): BulkAction[] => [{ label: 'Delete', run: (ids) => bulkDelete(family, ids), danger: true }];
const saved = () => 'Saved.';

const ASSISTANT_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Name' },
  { name: 'description', label: 'Description', type: 'textarea' },
  { name: 'instructions', label: 'Instructions', type: 'textarea' },
  { name: 'status', label: 'Status', type: 'select', options: ['active', 'unpublished', 'deleted'] },
];

const MODEL_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Name people pick' },
  { name: 'model', label: "Provider's model id" },
  { name: 'provider', label: 'Provider', type: 'select', options: ['openai', 'openai-compatible'] },
  { name: 'status', label: 'Status', type: 'select', options: ['active', 'inactive'] },
  { name: 'baseUrl', label: 'Endpoint URL (empty: the deployment’s)', type: 'url' },
  { name: 'maxTokens', label: 'Max tokens', type: 'number' },
  { name: 'contextWindow', label: 'Context window', type: 'number' },
  { name: 'inputPricePer1k', label: 'Credits per 1,000 input tokens', type: 'number' },
  { name: 'outputPricePer1k', label: 'Credits per 1,000 output tokens', type: 'number' },
];
const keyField = (editing: boolean): FieldSpec => ({
  name: 'apiKey',
  label: 'API key',
  type: 'password',
  hint: editing ? 'Stored encrypted and never shown; leave empty to keep the stored key.' : 'Stored encrypted; never shown again.',
});

const SSO_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Name on the sign-in page' },
  { name: 'issuer', label: 'Issuer URL', type: 'url' },
  { name: 'clientId', label: 'Client id' },
];
const secretField = (editing: boolean): FieldSpec => ({
  name: 'clientSecret',
  label: 'Client secret',
  type: 'password',
  hint: editing ? 'Stored encrypted and never shown; leave empty to keep the stored secret.' : 'Stored encrypted; never shown again.',
});

const ENTITLEMENT_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Entitlement name' },
  { name: 'description', label: 'Description', type: 'textarea' },
  { name: 'status', label: 'Status', type: 'select', options: ['active', 'inactive'] },
  { name: 'models', label: 'Models (comma-separated)', type: 'list' },
  { name: 'tools', label: 'Tools (comma-separated)', type: 'list' },
  { name: 'features', label: 'Features (comma-separated)', type: 'list' },
  { name: 'caps.dailyTurns', label: 'Turns a day in the twin (empty: no limit)', type: 'number', nullable: true },
  { name: 'caps.userDailyTurns', label: 'Turns a day per person (empty: no limit)', type: 'number', nullable: true },
  { name: 'caps.maxFiles', label: 'Files (empty: no limit)', type: 'number', nullable: true },
  { name: 'caps.maxCompletionTokens', label: 'Tokens per answer (empty: no limit)', type: 'number', nullable: true },
  { name: 'caps.monthlyCredits', label: 'Credits a month (empty: no limit)', type: 'number', nullable: true },
  { name: 'expiresAt', label: 'Expires (UTC; empty: never)', type: 'datetime', nullable: true },
];

const ACCOUNT_FIELDS: FieldSpec[] = [
  { name: 'name', label: 'Account name' },
  { name: 'contactEmail', label: 'Contact email', type: 'email' },
];

export default function Catalogs({ family }: { family: FamilyKey }) {
  const profile = useProfile();
  const can = actionsFor(profile);
  const title = FAMILIES.find((entry) => entry.key === family)?.label ?? family;
  const [editing, setEditing] = useState<{ id: string; label: string; record: Record<string, unknown> } | null>(null);
  const edit = (id: string, label: string, record: object) => setEditing({ id, label, record: record as Record<string, unknown> });
  const editForm = (fields: FieldSpec[], route: string, invalidate: string) =>
    editing && (
      <SimpleForm
        key={editing.id}
        title={`Edit ${editing.label}`}
        submitLabel="Save"
        fields={fields}
        record={editing.record}
        invalidate={invalidate}
        send={(body) => adminSend('PUT', `${route}/${editing.id}`, body)}
        done={saved}
        onClose={() => setEditing(null)}
      />
    );
  const body = (() => {
    switch (family) {
      case 'assistants':
        return (
          <>
            {editForm(ASSISTANT_FIELDS, '/api/admin/assistant', 'admin-assistants')}
            <AdminList<AdminAssistant>
              title={title}
              path="/api/admin/assistants"
              queryKey="admin-assistants"
              rowLabel={(row) => row.name}
              bulk={can.assistants.remove ? remove('assistants') : []}
              columns={[
                { header: 'Name', cell: (row) => row.name },
                { header: 'Scope', cell: (row) => row.scope },
                { header: 'Status', cell: (row) => row.status },
                { header: 'Created', cell: (row) => formatDate(row.created) },
              ]}
              rowActions={(row) => row.canEdit && <EditButton label={row.name} onClick={() => edit(row._id, row.name, row)} />}
            />
          </>
        );
      case 'models':
        return (
          <>
            <SimpleForm
              title="Add an AI model"
              submitLabel="Add model"
              invalidate="admin-models"
              send={(body) => adminSend('POST', '/api/admin/ai-model', body)}
              done={(body) => `Added ${body.name}.`}
              fields={[...MODEL_FIELDS.filter((field) => field.name !== 'status'), keyField(false)]}
            />
            {editForm([...MODEL_FIELDS, keyField(true)], '/api/admin/ai-model', 'admin-models')}
            <AdminList<AdminModel>
              title={title}
              path="/api/admin/ai-models"
              queryKey="admin-models"
              rowLabel={(row) => row.name}
              bulk={remove('ai-models')}
              selectable={(row) => Boolean(row.institution) || isSuper(profile)}
              columns={[
                { header: 'Name', cell: (row) => row.name },
                { header: 'Model', cell: (row) => row.model },
                { header: 'Where', cell: (row) => (row.institution ? 'this twin' : 'every twin') },
                { header: 'Key', cell: (row) => (row.apiKeySet ? 'Set (hidden)' : 'None') },
                { header: 'Status', cell: (row) => row.status },
              ]}
              // A deployment-wide model is written by super admins only.
              rowActions={(row) => (row.institution || isSuper(profile)) && <EditButton label={row.name} onClick={() => edit(row._id, row.name, row)} />}
            />
          </>
        );
      case 'sso':
        return (
          <>
            <SimpleForm
              title="Add an SSO provider"
              submitLabel="Add provider"
              invalidate="admin-sso"
              send={(body) => adminSend('POST', '/api/admin/sso-provider', body)}
              done={(body) => `Added ${body.name}.`}
              fields={[...SSO_FIELDS, secretField(false)]}
            />
            {editForm([...SSO_FIELDS, secretField(true)], '/api/admin/sso-provider', 'admin-sso')}
            <AdminList<SsoProvider>
              title={title}
              path="/api/admin/sso-providers"
              queryKey="admin-sso"
              searchable={false}
              rowLabel={(row) => row.name}
              bulk={remove('sso-providers')}
              columns={[
                { header: 'Name', cell: (row) => row.name },
                { header: 'Issuer', cell: (row) => row.issuer },
                { header: 'Client secret', cell: (row) => (row.hasClientSecret ? 'Set (hidden)' : 'None') },
              ]}
              rowActions={(row) => <EditButton label={row.name} onClick={() => edit(row._id, row.name, row)} />}
            />
          </>
        );
      case 'entitlements':
        return (
          <>
            {can.entitlements.edit && <AddEntitlement current={profile.institution?._id} />}
            {editForm(ENTITLEMENT_FIELDS, '/api/admin/entitlement', 'admin-entitlements')}
            <AdminList<Entitlement>
              title={title}
              path="/api/admin/entitlements"
              queryKey="admin-entitlements"
              rowLabel={(row) => row.name}
              bulk={can.entitlements.edit ? remove('entitlements') : []}
              columns={[
                { header: 'Name', cell: (row) => row.name },
                { header: 'Applies to', cell: (row) => (row.institution ? `twin ${row.institution}` : `account ${row.accountId}`) },
                { header: 'Status', cell: (row) => row.status },
                { header: 'Expires', cell: (row) => formatDate(row.expiresAt) },
              ]}
              rowActions={can.entitlements.edit ? (row) => <EditButton label={row.name} onClick={() => edit(row._id, row.name, row)} /> : undefined}
            />
          </>
        );
      case 'accounts':
        return (
          <>
            <SimpleForm
              title="Add an account"
              submitLabel="Add account"
              invalidate="admin-accounts"
              send={(body) => adminSend('POST', '/api/admin/account', body)}
              done={(body) => `Added ${body.name}. A twin joins it from its settings (Account id).`}
              fields={ACCOUNT_FIELDS}
            />
            {editForm(ACCOUNT_FIELDS, '/api/admin/account', 'admin-accounts')}
            <AdminList<Account>
              title={title}
              path="/api/admin/accounts"
              queryKey="admin-accounts"
              rowLabel={(row) => row.name}
              bulk={remove('accounts')}
              columns={[
                { header: 'Name', cell: (row) => row.name },
                { header: 'Contact', cell: (row) => row.contactEmail },
                { header: 'Id', cell: (row) => row._id },
                { header: 'Twins', cell: (row) => row.institutions.map((twin) => twin.name).join(', ') || 'none' },
              ]}
              rowActions={(row) => <EditButton label={row.name} onClick={() => edit(row._id, row.name, row)} />}
            />
          </>
        );
      default:
        return null;
    }
  })();
  return (
    <>
      <h1>{title}</h1>
      {body}
    </>
  );
}

/** A new entitlement for one twin (the current one first) or for every twin of an account. */
function AddEntitlement({ current }: { current?: string }) {
  const twins = useQuery({ queryKey: ['admin-twins-choice'], queryFn: () => adminGet<Page<{ _id: string; name: string }>>('/api/admin/institutions', { limit: 100 }) });
  const accounts = useQuery({ queryKey: ['admin-accounts-choice'], queryFn: () => adminGet<Page<Account>>('/api/admin/accounts', { limit: 100 }) });
  if (!twins.data || !accounts.data) return null;
  const none = { value: '', label: '—' };
  return (
    <SimpleForm
      title="Add an entitlement"
      submitLabel="Add entitlement"
      invalidate="admin-entitlements"
      send={(body) => adminSend('POST', '/api/admin/entitlement', body)}
      done={(body) => `Added ${body.name}.`}
      defaults={current ? { institution: current } : undefined}
      fields={[
        ENTITLEMENT_FIELDS[0],
        { name: 'institution', label: 'For the twin', type: 'select', options: [none, ...twins.data.data.map((twin) => ({ value: twin._id, label: twin.name }))] },
        { name: 'accountId', label: 'Or for every twin of the account', type: 'select', options: [none, ...accounts.data.data.map((account) => ({ value: account._id, label: account.name }))] },
        ...ENTITLEMENT_FIELDS.slice(1),
      ]}
    />
  );
}
