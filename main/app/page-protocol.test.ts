// The app:// handler under Node, on the built renderer: our page and its files, each
// with the Content-Security-Policy header; nothing else, however the path is spelt.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { distPaths } from '../paths';
import { CONTENT_SECURITY_POLICY, isPageUrl, PAGE_URL, pageHandler } from './page-protocol';

const handler = pageHandler(distPaths.renderer);
const get = (url: string, init?: RequestInit) => handler(new Request(url, init));

beforeAll(() => {
  if (!existsSync(path.join(distPaths.renderer, 'index.html')))
    throw new Error('The renderer is not built: run `npm run build` first (`npm test` does).');
});

describe('app://parley/', () => {
  it('serves the page and its assets with the CSP, nosniff and their content types', async () => {
    const page = await get(PAGE_URL);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<div id="root">');
    expect((await get('app://parley/')).status).toBe(200);
    const script = readdirSync(path.join(distPaths.renderer, 'assets')).find((f) => f.endsWith('.js'))!;
    const asset = await get(`app://parley/assets/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it('lets the page open no connection, no frame and no plugin', () => {
    for (const directive of ["connect-src 'none'", "frame-src 'none'", "object-src 'none'", "script-src 'self'"])
      expect(CONTENT_SECURITY_POLICY).toContain(directive);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('answers 404 for anything outside dist/renderer, another host, or another method', async () => {
    for (const url of [
      'app://parley/../package.json',
      'app://parley/%2e%2e/%2e%2e/package.json',
      'app://parley/..%2F..%2Fpackage.json',
      'app://parley/assets/..%2f..%2f..%2fpackage.json',
      'app://parley/%00index.html',
      'app://parley/%E0%A4%A',
      'app://parley/assets',
      'app://parley/missing.js',
      'app://evil/index.html',
      'app://parley.evil/index.html',
      'file:///etc/passwd',
    ])
      expect((await get(url)).status, url).toBe(404);
    expect((await get(PAGE_URL, { method: 'POST', body: 'x' })).status).toBe(404);
  });
});

describe('isPageUrl', () => {
  it('is our page with any fragment or query, and nothing else', () => {
    expect(isPageUrl(PAGE_URL)).toBe(true);
    expect(isPageUrl(`${PAGE_URL}#view=settings-connections`)).toBe(true);
    expect(isPageUrl(`${PAGE_URL}?x=1`)).toBe(true);
    for (const url of [
      'app://parley/other.html',
      'app://parley.evil/index.html',
      'file:///opt/parley/dist/renderer/index.html',
      'https://parley/index.html',
      'not a url',
      '',
    ])
      expect(isPageUrl(url), url).toBe(false);
  });
});
