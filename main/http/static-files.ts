// The built UI, served from one folder. A request names a file inside that folder or
// gets the page (the UI routes by itself); nothing outside it is ever read, however
// the path is spelled.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { contentTypeOf, pageSecurityHeaders } from './page-headers';

/** The browser page opens its app API WebSocket to this server. */
export const securityHeaders = pageSecurityHeaders('self');

/** The file a request path names inside `root`; null when it is not a path of a file in there. */
export function resolveInside(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = path.resolve(root, `.${path.posix.sep}${decoded}`);
  return isInside(root, file) ? file : null;
}

/** Whether `file` is `root` or lies under it: a path check, not a string prefix. */
export function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative === '' || (!path.isAbsolute(relative) && relative !== '..' && !relative.startsWith(`..${path.sep}`));
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...securityHeaders }).end(`${text}\n`);
}

export function serveStatic(root: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    plain(res, 405, 'only GET and HEAD');
    return;
  }
  let pathname: string;
  try {
    pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
  } catch {
    plain(res, 400, 'bad request path');
    return;
  }
  const named = resolveInside(root, pathname);
  if (named === null) {
    plain(res, 400, 'bad request path');
    return;
  }
  let file = named;
  if (!existsSync(file) || statSync(file).isDirectory()) file = path.join(root, 'index.html');
  if (!existsSync(file)) {
    plain(res, 503, 'The Parley UI is not built: run `npm run build`.');
    return;
  }
  // A link inside the folder that leads out of it is outside too.
  if (!isInside(realpathSync(root), realpathSync(file))) {
    plain(res, 404, 'not found');
    return;
  }
  const body = readFileSync(file);
  res.writeHead(200, {
    ...securityHeaders,
    'content-type': contentTypeOf(path.extname(file)),
    'content-length': body.length,
    'cache-control': file.endsWith('index.html') ? 'no-cache' : 'max-age=3600',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
