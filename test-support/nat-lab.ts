// A small internet of our own, made of Linux network namespaces: a "public" network with
// the DHT's bootstrap nodes, and two homes, each behind a router that masquerades. Every
// address lives inside namespaces this kit made, and `destroy()` removes them all.
//
//   home1 (192.168.1.2) ── router1 (192.168.1.1 | 10.200.0.11) ─┐
//                                                               ├─ public bridge (10.200.0.1: bootstrap, relay)
//   home2 (192.168.2.2) ── router2 (192.168.2.1 | 10.200.0.12) ─┘
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** How a router maps its homes' ports: keeping them where it can, or a new random one per destination. */
export type RouterNat = 'masquerade' | 'random';

export interface RouterOptions {
  nat: RouterNat;
  /** Drops every UDP packet the router would forward, as some networks do. */
  blockUdp?: boolean;
}

export interface NatLab {
  /** The namespaces, for `ip netns exec`. */
  readonly ns: { public: string; home1: string; home2: string; router1: string; router2: string };
  readonly addresses: { public: string; router1: string; router2: string; home1: string; home2: string };
  /** Prefix for a command to run inside a namespace. */
  wrapIn(ns: string): string[];
  /** Runs a command inside a namespace to its end; rejects when it fails. */
  sh(ns: string, command: string[]): Promise<string>;
  /** Makes 127.0.0.1:PORT inside `ns` reachable at 127.0.0.1:PORT here (the test's side). */
  bridgeLoopback(ns: string, port: number): Promise<void>;
  /** A long-lived process inside a namespace; killed by `destroy()`. */
  start(ns: string, command: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  destroy(): Promise<void>;
}

/** Why namespaces cannot be made here, or null when they can. */
export async function natLabUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (process.getuid?.() !== 0) return 'making network namespaces needs root';
  for (const tool of ['ip', 'nft', 'socat']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `${tool} is not installed (iproute2, nftables, socat)`;
    }
  }
  const probe = `plprobe${process.pid % 100000}`;
  try {
    await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'exec', probe, 'nft', 'list', 'ruleset']);
  } catch (error) {
    return `this machine does not let a test make a network namespace with nftables (${(error as Error).message.trim()})`;
  } finally {
    await run('ip', ['netns', 'del', probe]).catch(() => undefined);
  }
  return null;
}

let labs = 0;

export async function buildNatLab(routers: { router1: RouterOptions; router2: RouterOptions }): Promise<NatLab> {
  // Interface names are at most 15 characters: keep the prefix short and unique per process.
  const p = `pl${process.pid % 10000}${labs++}`;
  const ns = { public: `${p}pub`, router1: `${p}r1`, router2: `${p}r2`, home1: `${p}h1`, home2: `${p}h2` };
  const addresses = {
    public: '10.200.0.1',
    router1: '10.200.0.11',
    router2: '10.200.0.12',
    home1: '192.168.1.2',
    home2: '192.168.2.2',
  };
  const processes: ChildProcess[] = [];
  const bridges: Server[] = [];
  const ip = (...args: string[]) => run('ip', args);
  const inNs = (name: string, ...command: string[]) => run('ip', ['netns', 'exec', name, ...command]);

  const destroy = async () => {
    for (const server of bridges) server.close();
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    // Deleting a namespace deletes its interfaces, and with them their veth peers.
    for (const name of Object.values(ns)) await ip('netns', 'del', name).catch(() => undefined);
  };

  try {
    for (const name of Object.values(ns)) {
      await ip('netns', 'add', name);
      await ip('-n', name, 'link', 'set', 'lo', 'up');
    }
    await ip('-n', ns.public, 'link', 'add', 'br0', 'type', 'bridge');
    await ip('-n', ns.public, 'addr', 'add', `${addresses.public}/24`, 'dev', 'br0');
    await ip('-n', ns.public, 'link', 'set', 'br0', 'up');

    const homes = [
      { router: ns.router1, home: ns.home1, wan: addresses.router1, lan: 1, options: routers.router1 },
      { router: ns.router2, home: ns.home2, wan: addresses.router2, lan: 2, options: routers.router2 },
    ];
    for (const { router, home, wan, lan, options } of homes) {
      // The router's side on the public bridge.
      await ip('-n', router, 'link', 'add', 'wan', 'type', 'veth', 'peer', 'name', `${router}p`, 'netns', ns.public);
      await ip('-n', ns.public, 'link', 'set', `${router}p`, 'master', 'br0');
      await ip('-n', ns.public, 'link', 'set', `${router}p`, 'up');
      await ip('-n', router, 'addr', 'add', `${wan}/24`, 'dev', 'wan');
      await ip('-n', router, 'link', 'set', 'wan', 'up');
      // The home's cable to its router.
      await ip('-n', router, 'link', 'add', 'lan', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', home);
      await ip('-n', router, 'addr', 'add', `192.168.${lan}.1/24`, 'dev', 'lan');
      await ip('-n', router, 'link', 'set', 'lan', 'up');
      await ip('-n', home, 'addr', 'add', `192.168.${lan}.2/24`, 'dev', 'eth0');
      await ip('-n', home, 'link', 'set', 'eth0', 'up');
      await ip('-n', home, 'route', 'add', 'default', 'via', `192.168.${lan}.1`);
      await inNs(router, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
      const masquerade = options.nat === 'random' ? 'masquerade random,fully-random' : 'masquerade';
      const ruleset = [
        'table ip nat {',
        '  chain postrouting {',
        '    type nat hook postrouting priority srcnat; policy accept;',
        `    oifname "wan" ${masquerade}`,
        '  }',
        '}',
        'table ip filter {',
        // Unsolicited packets from the public side are dropped before conntrack confirms them:
        // kept, such an entry takes the port the home's own reply would be mapped to.
        '  chain input {',
        '    type filter hook input priority filter; policy accept;',
        '    iifname "wan" ct state new drop',
        '  }',
        '  chain forward {',
        '    type filter hook forward priority filter; policy drop;',
        ...(options.blockUdp ? ['    meta l4proto udp drop'] : []),
        '    ct state established,related accept',
        '    iifname "lan" accept',
        '  }',
        '}',
      ].join('\n');
      await runWithInput(['ip', 'netns', 'exec', router, 'nft', '-f', '-'], ruleset);
    }
  } catch (error) {
    await destroy();
    throw error;
  }

  return {
    ns,
    addresses,
    wrapIn: (name) => ['ip', 'netns', 'exec', name],
    async sh(name, command) {
      const { stdout } = await inNs(name, ...command);
      return stdout;
    },
    async bridgeLoopback(name, port) {
      const server = createServer((socket) => {
        const relay = spawn('ip', ['netns', 'exec', name, 'socat', 'STDIO', `TCP:127.0.0.1:${port}`], {
          stdio: ['pipe', 'pipe', 'ignore'],
        });
        socket.pipe(relay.stdin);
        relay.stdout.pipe(socket);
        socket.on('error', () => relay.kill());
        socket.on('close', () => relay.kill());
        relay.on('exit', () => socket.destroy());
        relay.stdin.on('error', () => socket.destroy());
      });
      bridges.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve());
      });
    },
    start(name, command, env = {}) {
      const [first = 'true', ...rest] = command;
      const child = spawn('ip', ['netns', 'exec', name, first, ...rest], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      });
      processes.push(child);
      return child;
    },
    destroy,
  };
}

function runWithInput(command: string[], input: string): Promise<void> {
  const [first = 'true', ...rest] = command;
  return new Promise((resolve, reject) => {
    const child = spawn(first, rest, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command.join(' ')}: ${stderr}`))));
    child.stdin.end(input);
  });
}
