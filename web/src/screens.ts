// The client's parts loaded when first needed (the people's area, the console, and each one's screens),
// each of which can be fetched ahead. React 19 holds a screen revealed after its loading fallback back
// for up to 300 ms (it batches reveals), so a first load that fetched the console, then its screen, waited
// twice. At start the client fetches the code the address it opens will need, beside the session's
// profile (preloadFor, main.tsx); a part whose code has arrived renders at once, with no fallback.
import { lazy, type ComponentType } from 'react';
import { FAMILIES, type FamilyKey } from './admin/families';

type Module<P> = { default: ComponentType<P> };

function part<P extends object>(load: () => Promise<Module<P>>) {
  let loaded: Module<P> | undefined;
  let loading: Promise<Module<P>> | undefined;
  const fetchCode = () =>
    (loading ??= load().then(
      (module) => (loaded = module),
      (error: unknown) => {
        loading = undefined;
        throw error;
      },
    ));
  // Code already here answers through a thenable that calls back at once: React.lazy then renders the
  // part in the same pass, without suspending (and so without the held-back reveal).
  const Component = lazy(() => (loaded ? ({ then: (resolve: (module: Module<P>) => void) => resolve(loaded!) } as unknown as Promise<Module<P>>) : fetchCode()));
  return { Component, preload: () => void fetchCode().catch(() => {}) };
}

export const chatArea = part(() => import('./chat-area'));
export const adminConsole = part(() => import('./admin/AdminConsole'));
export const filesPage = part(() => import('./pages/FilesPage'));
export const memoryPage = part(() => import('./pages/MemoryPage'));
export const settingsPage = part(() => import('./pages/SettingsPage'));

export const consoleScreens = {
  dashboard: part(() => import('./admin/Dashboard')),
  people: part(() => import('./admin/People')),
  twins: part(() => import('./admin/Twins')),
  questions: part(() => import('./admin/Questions')),
  mcp: part(() => import('./admin/McpServers')),
  tools: part(() => import('./admin/Tools')),
  lists: part(() => import('./admin/Lists')),
  catalogs: part(() => import('./admin/Catalogs')),
  subscription: part(() => import('./admin/Subscription')),
};

/** The console screen a family opens (the families without one of their own are lists). */
export function consoleScreenOf(family: FamilyKey): keyof typeof consoleScreens {
  if (family in consoleScreens) return family as keyof typeof consoleScreens;
  return ['assistants', 'models', 'sso', 'entitlements', 'accounts'].includes(family) ? 'catalogs' : 'lists';
}

/** Fetches the code the address will show (only for a signed-in tab: the sign-in pages need none of it). */
export function preloadFor(pathname: string): void {
  const [area, page] = pathname.split('/').filter(Boolean);
  if (area === 'admin') {
    adminConsole.preload();
    const family = FAMILIES.find((candidate) => candidate.path === page);
    if (family) consoleScreens[consoleScreenOf(family.key)].preload();
    return;
  }
  if (area && !['c', 'files', 'memory', 'settings'].includes(area)) return;
  chatArea.preload();
  ({ files: filesPage, memory: memoryPage, settings: settingsPage } as Record<string, ReturnType<typeof part>>)[area ?? '']?.preload();
}
