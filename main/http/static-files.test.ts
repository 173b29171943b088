import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isInside, resolveInside } from './static-files';

describe('the UI folder', () => {
  const root = path.resolve('/srv/parley/renderer');

  it.each([
    ['/', root],
    ['/index.html', path.join(root, 'index.html')],
    ['/assets/app.js', path.join(root, 'assets/app.js')],
    ['/a%20b.js', path.join(root, 'a b.js')],
    ['/../../etc/passwd', null],
    ['/..%2F..%2Fetc%2Fpasswd', null],
    ['/..%2Frenderer-secret.txt', null],
    ['/..%5C..%5Cwindows', path.join(root, '..\\..\\windows')],
    ['/%', null],
    ['/%E0%A4%A', null],
    ['/a%00b', null],
  ])('takes %s to %s', (urlPath, expected) => expect(resolveInside(root, urlPath)).toBe(expected));

  it.each([
    [root, true],
    [path.join(root, 'x'), true],
    [path.join(root, '..x'), true],
    [`${root}-secret.txt`, false],
    [path.dirname(root), false],
    ['/etc/passwd', false],
  ])('%s is inside: %s', (file, expected) => expect(isInside(root, file)).toBe(expected));
});
