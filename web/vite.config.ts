// Builds the web application into dist/web, which the Herald server serves at /.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  plugins: [react()],
  // The manifest (dist/web/.vite, not served) names each page's chunks, for the first page's size test.
  build: { outDir: path.join(here, '..', 'dist', 'web'), emptyOutDir: true, sourcemap: false, manifest: true, chunkSizeWarningLimit: 1000 },
  server: { proxy: { '/api': 'http://localhost:5000', '/uploads': 'http://localhost:5000', '/connect': 'http://localhost:5000' } },
});
