// The dashboard: usage (turns, tokens, credits, active people per day), feedback (up and down per day,
// per assistant) and the delegated subagents' efficiency, of the admin's scope or one twin of it, over a
// window they choose, drawn as charts.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { BarChart } from './Charts';
import { adminGet, fieldErrors, type Page } from './admin-api';
import { holds } from './families';
import { useProfile } from '../session';
import { Field } from './ui';

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const ACCENT = 'var(--accent)';
const UP = 'var(--chart-up)';
const DOWN = 'var(--chart-down)';

export default function Dashboard() {
  const today = new Date();
  const profile = useProfile();
  const [span, setSpan] = useState({ from: isoDay(new Date(today.getTime() - 29 * 86_400_000)), to: isoDay(today), institution: '' });
  const [draft, setDraft] = useState(span);
  // The twins to choose from: those the admin may list (a twin admin's are the ones they chart).
  const twins = useQuery({
    queryKey: ['admin-twins-choice'],
    queryFn: () => adminGet<Page<{ _id: string; name: string }>>('/api/admin/institutions', { limit: 100 }),
    enabled: holds(profile, 'institutions.list'),
  });
  const body = { from: span.from, to: span.to, ...(span.institution ? { institution: span.institution } : {}) };
  const usage = useQuery({ queryKey: ['chart-usage', body], queryFn: () => unwrap(api.POST('/api/admin/histories/charts/usage', { body })) });
  const feedback = useQuery({ queryKey: ['chart-feedback', body], queryFn: () => unwrap(api.POST('/api/admin/histories/charts/feedback', { body })) });
  const subagents = useQuery({ queryKey: ['chart-subagents', body], queryFn: () => unwrap(api.POST('/api/admin/histories/charts/subagent-efficiency', { body })) });
  const errors = fieldErrors(usage.error);
  const scopeName = span.institution ? (twins.data?.data.find((twin) => twin._id === span.institution)?.name ?? 'one twin') : 'every twin you administer';
  const days = usage.data?.days ?? [];
  const totals = days.reduce((sum, day) => ({ turns: sum.turns + day.turns, tokens: sum.tokens + day.tokens, credits: sum.credits + day.credits }), { turns: 0, tokens: 0, credits: 0 });
  return (
    <>
      <h1>Charts</h1>
      <form
        className="inline-form card"
        onSubmit={(event) => {
          event.preventDefault();
          setSpan(draft);
        }}
      >
        <Field label="From" error={errors.from}>
          {(props) => <input type="date" {...props} value={draft.from} onChange={(event) => setDraft({ ...draft, from: event.target.value })} />}
        </Field>
        <Field label="To" error={errors.to}>
          {(props) => <input type="date" {...props} value={draft.to} onChange={(event) => setDraft({ ...draft, to: event.target.value })} />}
        </Field>
        {(twins.data?.data.length ?? 0) > 1 && (
          <Field label="Twin" error={errors.institution}>
            {(props) => (
              <select {...props} value={draft.institution} onChange={(event) => setDraft({ ...draft, institution: event.target.value })}>
                <option value="">Every twin you administer</option>
                {twins.data!.data.map((twin) => (
                  <option key={twin._id} value={twin._id}>
                    {twin.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        <button type="submit" className="button-secondary">
          Show
        </button>
      </form>
      <ErrorNotice error={usage.error ?? feedback.error ?? subagents.error} />
      <section className="card" aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage</h2>
        <p>
          {totals.turns} turns, {totals.tokens} tokens, {Math.round(totals.credits * 100) / 100} credits from {span.from} to {span.to} ({scopeName}).
        </p>
        <div className="chart-grid-2">
          <BarChart title="Turns per day" series={['Turns']} colors={[ACCENT]} bars={days.map((day) => ({ label: day.day, values: [day.turns] }))} />
          <BarChart title="Active people per day" series={['People']} colors={[ACCENT]} bars={days.map((day) => ({ label: day.day, values: [day.activePeople] }))} />
          <BarChart title="Tokens per day" series={['Tokens']} colors={[ACCENT]} bars={days.map((day) => ({ label: day.day, values: [day.tokens] }))} />
          <BarChart title="Credits per day" series={['Credits']} colors={[ACCENT]} bars={days.map((day) => ({ label: day.day, values: [day.credits] }))} />
        </div>
      </section>
      <section className="card" aria-labelledby="feedback-heading">
        <h2 id="feedback-heading">Feedback</h2>
        <BarChart
          title="Ratings per day"
          series={['Up', 'Down']}
          colors={[UP, DOWN]}
          bars={(feedback.data?.days ?? []).map((day) => ({ label: day.day, values: [day.up, day.down] }))}
        />
        <table>
          <caption>Ratings per assistant</caption>
          <thead>
            <tr>
              <th scope="col">Assistant</th>
              <th scope="col">Up</th>
              <th scope="col">Down</th>
            </tr>
          </thead>
          <tbody>
            {(feedback.data?.assistants ?? []).map((row) => (
              <tr key={row.assistantId ?? row.name}>
                <td>{row.name}</td>
                <td>{row.up}</td>
                <td>{row.down}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card" aria-labelledby="subagents-heading">
        <h2 id="subagents-heading">Delegated subagents</h2>
        <BarChart title="Subagent runs per day" series={['Runs']} colors={[ACCENT]} bars={(subagents.data?.series ?? []).map((day) => ({ label: day.date, values: [day.runs] }))} />
        <table>
          <caption>Efficiency per subagent</caption>
          <thead>
            <tr>
              <th scope="col">Subagent</th>
              <th scope="col">Runs</th>
              <th scope="col">Steps</th>
              <th scope="col">Success</th>
              <th scope="col">Median time</th>
              <th scope="col">Tokens</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {(subagents.data?.data ?? []).map((row) => (
              <tr key={row.assistantId}>
                <td>{row.name}</td>
                <td>{row.runs}</td>
                <td>{row.steps}</td>
                <td>{Math.round(row.successRate * 100)}%</td>
                <td>{(row.medianDurationMs / 1000).toFixed(1)} s</td>
                <td>{row.tokens}</td>
                <td>{Math.round(row.credits * 100) / 100}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {subagents.isSuccess && subagents.data.data.length === 0 && <p className="muted">No subagent ran in this window.</p>}
      </section>
    </>
  );
}
