// What the page is sent with, said once for both ways it is served: the desktop window's
// app:// protocol and the browser UI's HTTP server. The two differ only in whom the page
// may open a connection to: the desktop page talks to main over IPC and needs none, the
// browser page opens its app API WebSocket to the server it came from.

export type PageConnections = 'none' | 'self';

/** What the page may load: its own files, no inline code or styles, no eval, no remote code. */
export function contentSecurityPolicy(connections: PageConnections): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src '${connections}'`,
    "frame-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function pageSecurityHeaders(connections: PageConnections): Record<string, string> {
  return {
    'content-security-policy': contentSecurityPolicy(connections),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** The Content-Type of a file of the built page, by its extension. */
export function contentTypeOf(extension: string): string {
  return contentTypes[extension] ?? 'application/octet-stream';
}
