// Settings: appearance (dark mode), how many earlier messages a conversation remembers, two-step
// verification, password.
import { useEffect, useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { TwoStep } from '../settings/TwoStep';
import { useSettings } from '../settings/useSettings';
import { ChangePasswordForm } from './PasswordPages';

export default function SettingsPage() {
  const { settings, save } = useSettings();
  const data = settings.data?.data;
  const [historyCount, setHistoryCount] = useState<number | null>(null);
  useEffect(() => {
    if (data) setHistoryCount(data.remember_history_count);
  }, [data]);

  return (
    <main id="main" className="page">
      <h1>Settings</h1>
      <section className="card" aria-labelledby="appearance">
        <h2 id="appearance">Appearance and conversations</h2>
        <label className="switch">
          <input type="checkbox" role="switch" checked={data?.dark_mode ?? false} disabled={!data} onChange={(event) => save.mutate({ dark_mode: event.target.checked })} />
          Dark mode
        </label>
        <form
          className="inline-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (historyCount !== null) save.mutate({ remember_history_count: historyCount });
          }}
        >
          <label>
            Earlier messages a conversation remembers (0–100)
            <input type="number" min={0} max={100} value={historyCount ?? ''} disabled={!data} onChange={(event) => setHistoryCount(Number(event.target.value))} />
          </label>
          <button type="submit" className="button-secondary" disabled={!data}>
            Save
          </button>
        </form>
        {save.isSuccess && <p role="status">Saved.</p>}
        <ErrorNotice error={save.error ?? settings.error} />
      </section>
      <TwoStep />
      <section className="card" aria-labelledby="password">
        <h2 id="password">Password</h2>
        <ChangePasswordForm />
      </section>
    </main>
  );
}
