// The sign-in providers a person may use (GET /api/auth/oauth/providers), as links that start signing in
// with each: a page load of GET /api/auth/oauth/<id>, not a fetch, since the browser goes to the provider.
import { useQuery } from '@tanstack/react-query';
import { useLocation } from 'react-router';
import { api, unwrap } from '../api/client';

/** The deployment's providers; with `?twin=<publicId>` in the address, that twin's own too (sessions limited to the twin). */
export function ProviderLinks() {
  const publicId = new URLSearchParams(useLocation().search).get('twin') ?? undefined;
  const providers = useQuery({
    queryKey: ['oauth-providers', publicId],
    queryFn: () => unwrap(api.GET('/api/auth/oauth/providers', { params: { query: publicId ? { publicId } : {} } })),
    retry: false,
  });
  const list = providers.data?.providers ?? [];
  if (list.length === 0) return null;
  return (
    <nav className="auth-providers" aria-label="Other ways to sign in">
      <p className="auth-divider">or</p>
      {list.map((provider) => (
        <a key={provider.id} className="button button-secondary" href={`/api/auth/oauth/${encodeURIComponent(provider.id)}`}>
          Continue with {provider.name}
        </a>
      ))}
    </nav>
  );
}
