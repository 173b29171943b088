// Run by `npm test` before the test runner: finds the system programs the tests use, and
// installs the missing ones where this machine lets it, so that the README's one test
// command is all a newcomer runs. What it found goes to dist/test-environment.json, which
// the tests read to skip, with the reason printed, what this machine cannot run.
//
//   a browser   for the UI tests: $PARLEY_CHROMIUM, a system Chromium, Playwright's own
//               download, else Debian's `chromium` (as root) or `playwright-core install`
//   bwrap+socat the agents' sandbox on Linux (Debian's bubblewrap and socat, as root)
//   nft         the NAT lab's routers (Debian's nftables, as root)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = process.platform === 'linux' && onPath('apt-get') !== null;

function say(line) {
  process.stdout.write(`test setup: ${line}\n`);
}

function onPath(program) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function systemBrowser() {
  const fromEnv = process.env.PARLEY_CHROMIUM;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome']) {
    const found = onPath(name);
    if (found) return found;
  }
  return null;
}

async function playwrightBrowser() {
  try {
    const { chromium } = await import('playwright-core');
    const file = chromium.executablePath();
    return file && existsSync(file) ? file : null;
  } catch {
    return null;
  }
}

let aptUpdated = false;
function aptInstall(packages) {
  if (!isRoot || !hasApt) return false;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  say(`installing ${packages.join(', ')} with apt-get`);
  if (!aptUpdated) {
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    if (update.status !== 0) return false;
    aptUpdated = true;
  }
  return spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: 'inherit', env }).status === 0;
}

async function findBrowser() {
  const found = systemBrowser() ?? (await playwrightBrowser());
  if (found) return { path: found, how: 'found' };
  if (aptInstall(['chromium'])) {
    const installed = systemBrowser();
    if (installed) return { path: installed, how: "installed Debian's chromium" };
  }
  say('installing Playwright’s Chromium (npx playwright-core install chromium)');
  const download = spawnSync('npx', ['playwright-core', 'install', 'chromium'], { stdio: 'inherit', cwd: root });
  const downloaded = download.status === 0 ? await playwrightBrowser() : null;
  if (downloaded) return { path: downloaded, how: 'installed Playwright’s Chromium' };
  return {
    path: null,
    why: isRoot
      ? 'no Chromium here, and neither apt-get nor Playwright’s download could install one'
      : 'no Chromium here: install one (sudo apt-get install chromium), or set PARLEY_CHROMIUM to a Chrome or Chromium',
  };
}

function findPrograms(programs, debianPackages, purpose) {
  const missing = programs.filter((program) => onPath(program) === null);
  if (missing.length === 0) return { ok: true, how: 'found' };
  if (process.platform !== 'linux') return { ok: false, why: `${purpose} needs Linux` };
  if (aptInstall(debianPackages) && programs.every((program) => onPath(program) !== null))
    return { ok: true, how: `installed ${debianPackages.join(', ')}` };
  return {
    ok: false,
    why: `${missing.join(' and ')} missing (${purpose}): install ${debianPackages.join(' ')}${isRoot ? '' : ' as root'}`,
  };
}

/**
 * bubblewrap installed is not yet a sandbox: a kernel or container that refuses new user
 * namespaces (a chroot, some containers, AppArmor's restriction) makes every wrap fail.
 */
function namespacesWork(found) {
  if (!found.ok) return found;
  const probe = spawnSync(
    onPath('bwrap'),
    ['--unshare-user', '--unshare-net', '--unshare-pid', '--dev-bind', '/', '/', 'true'],
    {
      encoding: 'utf8',
      timeout: 10_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  if (probe.status === 0) return found;
  const line = (probe.stderr ?? '').split('\n').find((l) => l.trim()) ?? probe.error?.message ?? `exit ${probe.status}`;
  return { ok: false, why: `bubblewrap cannot make the sandbox’s namespaces on this machine (${line.trim()})` };
}

const browser = await findBrowser();
const sandbox = namespacesWork(findPrograms(['bwrap', 'socat'], ['bubblewrap', 'socat'], 'the agents’ sandbox'));
const nat = findPrograms(['nft', 'ip'], ['nftables', 'iproute2'], 'the NAT lab');

let browserVersion = '';
if (browser.path)
  try {
    browserVersion = execFileSync(browser.path, ['--version'], {
      encoding: 'utf8',
      timeout: 20_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    browserVersion = '';
  }

say(
  browser.path
    ? `browser: ${browser.how} ${browser.path}${browserVersion ? ` (${browserVersion})` : ''}`
    : `browser: none; the UI tests will skip (${browser.why})`,
);
say(sandbox.ok ? `sandbox (bubblewrap, socat): ${sandbox.how}` : `sandbox: ${sandbox.why}; its tests will skip`);
say(nat.ok ? `NAT lab (nftables, iproute2): ${nat.how}` : `NAT lab: ${nat.why}; it will skip`);

mkdirSync(path.join(root, 'dist'), { recursive: true });
writeFileSync(
  path.join(root, 'dist', 'test-environment.json'),
  JSON.stringify(
    {
      browser: browser.path ? { path: browser.path } : { path: null, why: browser.why },
      sandbox: sandbox.ok ? { ok: true } : { ok: false, why: sandbox.why },
      nat: nat.ok ? { ok: true } : { ok: false, why: nat.why },
    },
    null,
    2,
  ) + '\n',
);
