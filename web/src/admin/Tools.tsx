// Tools of the current twin, built-in and from its MCP servers: each switched on or off for the twin
// (its toolsDisabled list).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';

export default function Tools() {
  const queryClient = useQueryClient();
  const tools = useQuery({ queryKey: ['admin-tools'], queryFn: () => unwrap(api.GET('/api/admin/tools')) });
  const [error, setError] = useState<unknown>(null);
  // The switch moves at once; a refusal puts it back and says why.
  const [pending, setPending] = useState<Record<string, boolean>>({});
  const switchTool = async (name: string, enabled: boolean) => {
    setError(null);
    setPending((current) => ({ ...current, [name]: enabled }));
    try {
      await unwrap(api.PUT('/api/admin/tool/{name}', { params: { path: { name } }, body: { enabled } }));
      await queryClient.invalidateQueries({ queryKey: ['admin-tools'] });
    } catch (failure) {
      setError(failure);
    }
    setPending(({ [name]: _done, ...rest }) => rest);
  };
  return (
    <>
      <h1>Tools</h1>
      <ErrorNotice error={error ?? tools.error} />
      <section className="card" aria-label="Tools">
        <ul className="tool-list">
          {(tools.data?.data ?? []).map((tool) => (
            <li key={tool.name}>
              <label className="switch">
                <input type="checkbox" role="switch" checked={pending[tool.name] ?? tool.enabled} onChange={(event) => switchTool(tool.name, event.target.checked)} />
                {tool.server ? `${tool.server.name}: ${tool.tool}` : tool.tool}
              </label>
              {tool.description && <small className="muted"> {tool.description}</small>}
            </li>
          ))}
        </ul>
        {tools.isSuccess && (tools.data?.data.length ?? 0) === 0 && <p className="muted">No tools.</p>}
      </section>
    </>
  );
}
