// The dashboard: usage (turns, tokens, credits, active people per day) and feedback (up and down per
// day, per assistant) of the admin's scope, over a window they choose, drawn as charts.
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { BarChart } from './Charts';
import { fieldErrors } from './admin-api';
import { Field } from './ui';

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const ACCENT = 'var(--accent)';
const UP = 'var(--chart-up)';
const DOWN = 'var(--chart-down)';

export default function Dashboard() {
  const today = new Date();
  const [span, setSpan] = useState({ from: isoDay(new Date(today.getTime() - 29 * 86_400_000)), to: isoDay(today) });
  const [draft, setDraft] = useState(span);
  const body = { from: span.from, to: span.to };
  const usage = useQuery({ queryKey: ['chart-usage', body], queryFn: () => unwrap(api.POST('/api/admin/histories/charts/usage', { body })) });
  const feedback = useQuery({ queryKey: ['chart-feedback', body], queryFn: () => unwrap(api.POST('/api/admin/histories/charts/feedback', { body })) });
  const errors = fieldErrors(usage.error);
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
        <button type="submit" className="button-secondary">
          Show
        </button>
      </form>
      <ErrorNotice error={usage.error ?? feedback.error} />
      <section className="card" aria-labelledby="usage-heading">
        <h2 id="usage-heading">Usage</h2>
        <p>
          {totals.turns} turns, {totals.tokens} tokens, {Math.round(totals.credits * 100) / 100} credits from {span.from} to {span.to}.
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
    </>
  );
}
