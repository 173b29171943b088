// Builds the renderer (React) into dist/renderer. The same files are loaded by the
// Electron window from app://parley/ and served by `parley serve` over HTTP, so every
// URL in the output is relative (`base: './'`).
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const rendererDir = fileURLToPath(new URL('./renderer/', import.meta.url));
const outDir = fileURLToPath(new URL('./dist/renderer/', import.meta.url));

/**
 * The dev server injects inline scripts and styles (React refresh, HMR) that the page's
 * strict Content-Security-Policy forbids. Loosen it for `vite dev` only; builds keep it.
 */
function devCsp(): Plugin {
  return {
    name: 'parley-dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html.replace(
        /<meta\s+http-equiv="Content-Security-Policy"[^>]*>/,
        `<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: http:">`,
      );
    },
  };
}

// `PARLEY_SERVE_URL=http://127.0.0.1:PORT npx vite` develops the UI against a running
// `parley serve`: the page's /api WebSocket is forwarded there.
const serveUrl = process.env.PARLEY_SERVE_URL;

export default defineConfig({
  root: rendererDir,
  base: './',
  plugins: [react(), devCsp()],
  // The page is written against React's API and runs on Preact's compatible one: the same
  // components in a tenth of react-dom's size, so the first view's script stays small.
  resolve: {
    alias: [
      { find: /^react\/jsx-runtime$/, replacement: 'preact/jsx-runtime' },
      { find: /^react\/jsx-dev-runtime$/, replacement: 'preact/jsx-dev-runtime' },
      { find: /^react-dom\/client$/, replacement: 'preact/compat/client' },
      { find: /^react-dom\/test-utils$/, replacement: 'preact/test-utils' },
      { find: /^react-dom$/, replacement: 'preact/compat' },
      { find: /^react$/, replacement: 'preact/compat' },
    ],
  },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  server: serveUrl ? { proxy: { '/api': { target: serveUrl, ws: true } } } : {},
});
