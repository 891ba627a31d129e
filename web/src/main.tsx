import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { tokenStore } from './api/client';
import { AppRoutes } from './routes';
import { preloadFor } from './screens';
import { SessionProvider } from './session';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: { retry: (count, error) => count < 2 && !(error && 'status' in error && Number(error.status) < 500), refetchOnWindowFocus: false, staleTime: 10_000 },
  },
});

// A signed-in tab fetches the code of the address it opens beside the session's profile (screens.ts).
if (tokenStore.get()) preloadFor(window.location.pathname);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <BrowserRouter>
        <SessionProvider>
          <AppRoutes />
        </SessionProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
