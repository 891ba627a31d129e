// The console's building blocks: a form field that shows the service's error at the field, a list
// with search, pages, selection and bulk actions that report how many changed, and a notice.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ReactNode } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { adminGet, type Page } from './admin-api';

export function Field({ label, error, children, hint }: { label: string; error?: string; hint?: string; children: (props: { id: string; 'aria-invalid'?: boolean; 'aria-describedby'?: string }) => ReactNode }) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, ...(error ? { 'aria-invalid': true, 'aria-describedby': errorId } : {}) })}
      {hint && !error && <small className="muted">{hint}</small>}
      {error && (
        <small className="field-error" id={errorId}>
          {error}
        </small>
      )}
    </div>
  );
}

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
}

export interface BulkAction {
  label: string;
  run: (ids: string[]) => Promise<{ changed: number }>;
  danger?: boolean;
}

/** A paginated, searchable list of one family, with row selection when bulk actions are offered. */
export function AdminList<Row extends { _id: string }>({
  title,
  path,
  queryKey,
  columns,
  bulk = [],
  searchable = true,
  extraQuery = {},
  rowActions,
  caption,
  rowLabel,
  selectable,
}: {
  title: string;
  path: string;
  queryKey: string;
  columns: Column<Row>[];
  bulk?: BulkAction[];
  searchable?: boolean;
  extraQuery?: Record<string, string | undefined>;
  rowActions?: (row: Row) => ReactNode;
  caption?: string;
  /** What a row's checkbox is called ("Select ada@example.test"). */
  rowLabel: (row: Row) => string;
  /** Whether the bulk actions may take this row (the service would skip it otherwise); every row when absent. */
  selectable?: (row: Row) => boolean;
}) {
  const queryClient = useQueryClient();
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const limit = 20;
  const list = useQuery({
    queryKey: [queryKey, { search, page, ...extraQuery }],
    queryFn: () => adminGet<Page<Row>>(path, { page, limit, search: searchable ? search : undefined, ...extraQuery }),
  });
  const rows = list.data?.data ?? [];
  const total = list.data?.total ?? 0;
  const pages = Math.max(1, Math.ceil(total / limit));
  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const runBulk = async (action: BulkAction) => {
    setError(null);
    setOutcome(null);
    try {
      const { changed } = await action.run([...selected]);
      setOutcome(`${action.label}: ${changed} changed.`);
      setSelected(new Set());
      await queryClient.invalidateQueries({ queryKey: [queryKey] });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <section className="card admin-list" aria-label={title}>
      {searchable && (
        <form
          className="inline-form"
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setSearch(typed.trim());
            setPage(1);
          }}
        >
          <label>
            Search {title.toLowerCase()}
            <input type="search" value={typed} onChange={(event) => setTyped(event.target.value)} />
          </label>
          <button type="submit" className="button-secondary">
            Search
          </button>
        </form>
      )}
      {bulk.length > 0 && (
        <div className="button-row" aria-label="Bulk actions" role="group">
          <span className="muted">{selected.size} selected</span>
          {bulk.map((action) => (
            <button key={action.label} type="button" className={action.danger ? 'button-danger' : 'button-secondary'} disabled={selected.size === 0} onClick={() => runBulk(action)}>
              {action.label}
            </button>
          ))}
        </div>
      )}
      {outcome && <p role="status">{outcome}</p>}
      <ErrorNotice error={error ?? list.error} />
      <DataTable
        caption={caption ?? title}
        rows={rows}
        columns={columns}
        rowActions={rowActions}
        select={bulk.length > 0 ? { label: rowLabel, selectable, selected, toggle } : undefined}
      />
      {list.isSuccess && rows.length === 0 && <p className="muted">Nothing to show.</p>}
      <nav className="pager" aria-label={`${title} pages`}>
        <button type="button" className="button-secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <span>
          Page {page} of {pages} ({total} in all)
        </span>
        <button type="button" className="button-secondary" disabled={page >= pages} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </nav>
    </section>
  );
}

/** A table of rows: a column per field, an optional checkbox column and a last column of actions. */
export function DataTable<Row extends { _id: string }>({
  caption,
  rows,
  columns,
  rowActions,
  select,
}: {
  caption: string;
  rows: Row[];
  columns: Column<Row>[];
  rowActions?: (row: Row) => ReactNode;
  select?: { label: (row: Row) => string; selectable?: (row: Row) => boolean; selected: Set<string>; toggle: (id: string) => void };
}) {
  return (
    <div className="table-scroll">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {select && (
              <th scope="col">
                <span className="visually-hidden">Select</span>
              </th>
            )}
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.header}
              </th>
            ))}
            {rowActions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row._id}>
              {select && (
                <td>
                  {(select.selectable?.(row) ?? true) && (
                    <input type="checkbox" aria-label={`Select ${select.label(row)}`} checked={select.selected.has(row._id)} onChange={() => select.toggle(row._id)} />
                  )}
                </td>
              )}
              {columns.map((column) => (
                <td key={column.header}>{column.cell(row)}</td>
              ))}
              {rowActions && <td className="row-actions">{rowActions(row)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export const formatDate = (iso: string | null | undefined) => (iso ? new Date(iso).toISOString().slice(0, 16).replace('T', ' ') : '—');
