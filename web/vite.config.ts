// The web client's build: hashed assets under /assets (the service sends them with long-lived cache
// headers), the page at index.html. `npm run dev` proxies the API of a service on :3000.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const service = process.env.SERVICE_URL ?? 'http://localhost:3000';

export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false, chunkSizeWarningLimit: 800 },
  server: { proxy: { '/api': service, '/socket.io': { target: service, ws: true } } },
});
