// The window's page comes from app://parley/, a scheme of our own, not from file://:
// the page gets a real origin, it can reach no file but those of dist/renderer/, and
// its Content-Security-Policy travels as a response header. This file holds the
// handler itself, without Electron, so it can be tested under Node; window.ts
// registers it.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { contentSecurityPolicy, contentTypeOf, pageSecurityHeaders } from '../http/page-headers';

export const PAGE_SCHEME = 'app';
export const PAGE_HOST = 'parley';
export const PAGE_URL = `${PAGE_SCHEME}://${PAGE_HOST}/index.html`;

/** The desktop page talks to main over IPC only, so it may open no connection at all. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy('none');
const securityHeaders = pageSecurityHeaders('none');

/** True when `url` is the page's address with any fragment or query. */
export function isPageUrl(url: string, page = PAGE_URL): boolean {
  const document = (value: string) => {
    const parsed = new URL(value);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  };
  try {
    return document(url) === document(page);
  } catch {
    return false;
  }
}

const notFound = () => new Response('Not found', { status: 404, headers: securityHeaders });

/** The protocol handler: a file of `rendererDir` for app://parley/PATH, 404 for anything else. */
export function pageHandler(rendererDir: string): (request: Request) => Promise<Response> {
  const root = path.resolve(rendererDir);
  return async (request) => {
    let url: URL;
    let pathname: string;
    try {
      url = new URL(request.url);
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return notFound();
    }
    if (url.protocol !== `${PAGE_SCHEME}:` || url.host !== PAGE_HOST || request.method !== 'GET') return notFound();
    const file = path.resolve(root, `.${pathname === '/' ? '/index.html' : pathname}`);
    if (!file.startsWith(`${root}${path.sep}`) || file.includes('\0')) return notFound();
    try {
      if (!(await stat(file)).isFile()) return notFound();
      const body = await readFile(file);
      return new Response(body, {
        status: 200,
        headers: {
          ...securityHeaders,
          'content-type': contentTypeOf(path.extname(file)),
        },
      });
    } catch {
      return notFound();
    }
  };
}
