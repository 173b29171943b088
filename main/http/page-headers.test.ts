// One Content-Security-Policy for the page, however it is served: the desktop window's
// app:// protocol and the browser UI's server send the same policy, which differs only
// in whether the page may connect back to where it came from.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGE_URL, pageHandler } from '../app/page-protocol';
import { distPaths } from '../paths';
import { securityHeaders } from './static-files';

const directives = (policy: string) => new Map(policy.split('; ').map((d) => [d.split(' ')[0], d] as const));

describe('the page’s security headers', () => {
  it('are the same for the desktop window and the browser UI but for connect-src', async () => {
    const desktop = await pageHandler(distPaths.renderer)(new Request(PAGE_URL));
    const desktopPolicy = directives(desktop.headers.get('content-security-policy') ?? '');
    const browserPolicy = directives(securityHeaders['content-security-policy'] ?? '');
    expect(desktopPolicy.get('connect-src')).toBe("connect-src 'none'");
    expect(browserPolicy.get('connect-src')).toBe("connect-src 'self'");
    desktopPolicy.delete('connect-src');
    browserPolicy.delete('connect-src');
    expect([...browserPolicy.entries()]).toEqual([...desktopPolicy.entries()]);
    expect(desktopPolicy.get('style-src')).toBe("style-src 'self'");
    for (const header of ['x-content-type-options', 'referrer-policy', 'cross-origin-opener-policy'])
      expect(desktop.headers.get(header)).toBe(securityHeaders[header]);
  });

  it('are the only policy: the built page carries none of its own to drift from them', () => {
    const html = readFileSync(path.join(distPaths.renderer, 'index.html'), 'utf8');
    expect(html).not.toMatch(/http-equiv=["']?content-security-policy/i);
  });
});
