import { describe, expect, it } from 'vitest';
import type { TurnTrust } from '../../shared/domain';
import {
  agentConfigDirs,
  codexConfigEndpoints,
  beyondMachineAllows,
  endpointDestination,
  endpointHost,
  modelEndpoints,
  networkReach,
  sandboxPolicy,
  type SandboxPolicyInput,
} from './policy';
import { sandboxChoice } from './turn-sandbox';

const base: SandboxPolicyInput = {
  trust: 'own',
  dataDir: '/home/mia/.local/share/parley',
  roleFolder: '/home/mia/.local/share/parley-roles/role-1',
  otherRoleFolders: ['/home/mia/.local/share/parley-roles/role-2', '/srv/project'],
  runTmp: '/home/mia/.local/share/parley/turns/turn-7',
  roleApiSocket: '/home/mia/.local/share/parley/role-api.sock',
  launcher: ['/home/mia/.local/share/parley/bin', '/usr', '/opt/parley'],
  modelEndpoints: ['http://127.0.0.1:8080/v1'],
  programHosts: ['api.anthropic.com'],
  agentConfig: ['/home/mia/.claude'],
  programDirs: ['/usr/lib/node_modules'],
  home: '/home/mia',
};

describe('sandboxPolicy', () => {
  const levels: Array<{
    trust: TurnTrust;
    homeReadable: boolean;
    writes: string[];
    reach: string;
    hosts: string[];
  }> = [
    {
      trust: 'own',
      homeReadable: true,
      writes: [base.roleFolder, base.runTmp, '/home/mia/.claude'],
      reach: 'open',
      hosts: ['127.0.0.1:8080', 'api.anthropic.com:443', '127.0.0.1', 'localhost', '[::1]'],
    },
    {
      trust: 'full',
      homeReadable: true,
      writes: [base.roleFolder, base.runTmp, '/home/mia/.claude'],
      reach: 'open',
      hosts: ['127.0.0.1:8080', 'api.anthropic.com:443', '127.0.0.1', 'localhost', '[::1]'],
    },
    {
      trust: 'work',
      homeReadable: true,
      writes: [base.roleFolder, base.runTmp, '/home/mia/.claude'],
      // Beyond this machine, and of this machine only the model server's port.
      reach: 'beyond-machine',
      hosts: ['127.0.0.1:8080', 'api.anthropic.com:443'],
    },
    // Only the model endpoint's host and port; reads the role's folder but writes only its temporary folder.
    {
      trust: 'answer',
      homeReadable: false,
      writes: [base.runTmp, '/home/mia/.claude'],
      reach: 'endpoints',
      hosts: ['127.0.0.1:8080'],
    },
  ];
  it.each(levels)(
    '$trust: reads, writes and reaches what its level allows',
    ({ trust, homeReadable, writes, reach, hosts }) => {
      const policy = sandboxPolicy({ ...base, trust });
      // The data folder is never readable, except what the turn needs inside it.
      expect(policy.filesystem.denyRead).toContain(base.dataDir);
      expect(policy.filesystem.allowRead).toEqual(
        expect.arrayContaining([base.roleFolder, base.runTmp, base.roleApiSocket, '/home/mia/.local/share/parley/bin']),
      );
      expect(policy.filesystem.denyRead).not.toContain(`${base.dataDir}/identity`);
      // Other roles' folders are never readable.
      expect(policy.filesystem.denyRead).toEqual(expect.arrayContaining([...base.otherRoleFolders]));
      expect(policy.filesystem.denyRead.includes(base.home)).toBe(!homeReadable);
      expect(policy.filesystem.allowWrite).toEqual(writes);
      expect(policy.reach).toBe(reach);
      expect(policy.allowedDomains).toEqual(hosts);
    },
  );

  it('keeps the role’s own folder readable when another role works inside or around it', () => {
    const policy = sandboxPolicy({
      ...base,
      roleFolder: '/srv/project/sub',
      otherRoleFolders: ['/srv/project', '/srv/project/sub/deeper'],
    });
    expect(policy.filesystem.denyRead).toEqual([base.dataDir]);
  });

  it('reads only its own socket when the socket is outside the data folder', () => {
    const policy = sandboxPolicy({ ...base, roleApiSocket: '/tmp/parley-0/abc.sock' });
    expect(policy.filesystem.denyRead).toContain('/tmp/parley-0');
    expect(policy.filesystem.allowRead).toContain('/tmp/parley-0/abc.sock');
  });

  it('names each endpoint by host and port, and leaves out what the proxy cannot be told', () => {
    const policy = sandboxPolicy({
      ...base,
      trust: 'answer',
      modelEndpoints: ['http://localhost:1/v1', 'https://api.example.com', '[::1]:8080', 'not a url', 'gpu-box:80'],
    });
    expect(policy.allowedDomains).toEqual(['localhost:1', 'api.example.com:443', '[::1]:8080']);
  });
});

describe('the network of a level', () => {
  it.each([
    ['answer', 'endpoints'],
    ['work', 'beyond-machine'],
    ['full', 'open'],
    ['own', 'open'],
  ] as const)('%s reaches %s', (trust, reach) => expect(networkReach(trust)).toBe(reach));

  it.each([
    ['http://127.0.0.1:8080/v1', '127.0.0.1:8080'],
    ['http://127.0.0.1/v1', '127.0.0.1:80'],
    ['https://gw.example.com/x', 'gw.example.com:443'],
    ['https://gw.example.com:8443/x', 'gw.example.com:8443'],
    ['api.openai.com', 'api.openai.com:443'],
    ['http://[::1]:9/v1', '[::1]:9'],
    ['http://localhost:5/v1', 'localhost:5'],
    ['http://gpu-box:80', null],
    ['', null],
  ])('endpointDestination(%j) is %j', (endpoint, destination) =>
    expect(endpointDestination(endpoint)).toBe(destination),
  );

  const local = ['192.168.1.20', 'fe80::1', '10.0.0.5'];
  it.each([
    ['api.example.com', true],
    ['example.org', true],
    ['93.184.215.14', true],
    ['[2606:4700::1111]', true],
    // The local network is beyond this machine; this machine's own address on it is not.
    ['192.168.1.7', true],
    ['192.168.1.20', false],
    ['10.0.0.5', false],
    ['127.0.0.1', false],
    ['127.8.9.10', false],
    ['[::1]', false],
    ['[::ffff:127.0.0.1]', false],
    ['0.0.0.0', false],
    ['169.254.169.254', false],
    ['[fe80::1]', false],
    ['224.0.0.251', false],
    ['localhost', false],
    ['app.localhost', false],
  ])('beyondMachineAllows(%j) is %j', (host, allowed) => expect(beyondMachineAllows(host, local)).toBe(allowed));
});

describe('the parts of a turn the policy is made of', () => {
  it.each([
    ['http://127.0.0.1:8080/v1', '127.0.0.1'],
    ['api.openai.com', 'api.openai.com'],
    ['https://gw.example.com:8443/x', 'gw.example.com'],
    ['', null],
  ])('endpointHost(%j) is %j', (endpoint, host) => expect(endpointHost(endpoint)).toBe(host));

  it.each([
    ['claude-code', {}, ['/h/.claude', '/h/.claude.json']],
    ['claude-code', { CLAUDE_CONFIG_DIR: '/c' }, ['/c']],
    ['codex', {}, ['/h/.codex']],
    ['codex', { CODEX_HOME: '/x' }, ['/x']],
    ['acp', {}, ['/h/.claude', '/h/.claude.json', '/h/.codex']],
    ['command', {}, []],
  ])('agentConfigDirs(%s, %j)', (adapter, env, dirs) => expect(agentConfigDirs(adapter, env, '/h')).toEqual(dirs));

  it.each([
    ['openai-compatible', 'http://127.0.0.1:9/v1', {}, ['http://127.0.0.1:9/v1']],
    ['claude-code', undefined, { ANTHROPIC_BASE_URL: 'http://127.0.0.1:7' }, ['http://127.0.0.1:7']],
    ['codex', undefined, {}, ['api.openai.com', 'chatgpt.com']],
    ['command', undefined, {}, []],
  ])('modelEndpoints(%s)', (adapter, baseUrl, env, endpoints) =>
    expect(modelEndpoints(adapter, baseUrl, env)).toEqual(endpoints),
  );

  it('takes the model providers a Codex config.toml names as its endpoints', () => {
    const toml = [
      'model_provider = "local"',
      '[model_providers.local]',
      'base_url = "http://127.0.0.1:8080/v1"',
      "  base_url='https://llm.example.com/v1'",
      '# base_url = "http://commented.out"',
    ].join('\n');
    expect(codexConfigEndpoints(toml)).toEqual(['http://127.0.0.1:8080/v1', 'https://llm.example.com/v1']);
    expect(modelEndpoints('codex', undefined, {}, codexConfigEndpoints(toml))).toEqual([
      'http://127.0.0.1:8080/v1',
      'https://llm.example.com/v1',
    ]);
  });
});

describe('sandboxChoice', () => {
  const up = { available: true } as const;
  const down = { available: false, reason: 'bubblewrap (bwrap) is not installed' } as const;
  const off = { available: false, reason: 'the sandbox is turned off', turnedOff: true } as const;
  it.each([
    [up, 'own', false, 'sandbox'],
    [up, 'answer', false, 'sandbox'],
    [up, 'full', true, 'sandbox'],
    [down, 'own', false, 'unsandboxed'],
    [down, 'answer', false, 'refuse'],
    [down, 'work', false, 'refuse'],
    [down, 'full', false, 'refuse'],
    [down, 'answer', true, 'unsandboxed'],
    // Turned off by whoever runs Parley: their choice covers every run.
    [off, 'answer', false, 'unsandboxed'],
  ] as const)('%j, %s, allowed without: %s → %s', (status, trust, allowed, choice) =>
    expect(sandboxChoice(status, trust, allowed)).toBe(choice),
  );
});
