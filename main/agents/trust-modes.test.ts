import { describe, expect, it } from 'vitest';
import type { TurnTrust } from '../../shared/domain';
import { acpPermissionPolicy, chooseAcpMode, claudeCodeModeArgs, codexModeOptions } from './trust-modes';

const CLAUDE_ACP = ['default', 'acceptEdits', 'plan', 'auto', 'bypassPermissions'];
const CODEX_ACP = ['read-only', 'auto', 'full-access'];
const DENY = 'Bash,Edit,Write,MultiEdit,NotebookEdit,WebFetch,WebSearch';

describe('Claude Code’s permission mode by trust', () => {
  it.each<[TurnTrust, string | undefined, string[]]>([
    [
      'answer',
      'bypassPermissions',
      [
        '--permission-mode',
        'dontAsk',
        '--disallowedTools',
        DENY,
        '--settings',
        JSON.stringify({ permissions: { defaultMode: 'dontAsk', deny: DENY.split(',') } }),
      ],
    ],
    [
      'work',
      'bypassPermissions',
      [
        '--permission-mode',
        'acceptEdits',
        '--disallowedTools',
        'WebFetch,WebSearch',
        '--permission-prompt-tool',
        'mcp__parley__permission',
      ],
    ],
    ['full', 'bypassPermissions', ['--permission-mode', 'bypassPermissions']],
    ['own', 'plan', ['--permission-mode', 'plan']],
    ['own', undefined, []],
    ['full', undefined, []],
  ])('%s with the role’s %s → %j', (trust, mode, args) => {
    expect(claudeCodeModeArgs(trust, mode)).toEqual(args);
  });
});

describe('Codex’s sandbox and approvals by trust', () => {
  it.each<[TurnTrust, 'read-only' | 'workspace-write' | 'danger-full-access' | undefined, string[]]>([
    ['answer', 'danger-full-access', ['-c', 'sandbox_mode="read-only"', '-c', 'approval_policy="never"']],
    [
      'work',
      'danger-full-access',
      [
        '-c',
        'sandbox_mode="workspace-write"',
        '-c',
        'sandbox_workspace_write.network_access=false',
        '-c',
        'approval_policy="never"',
      ],
    ],
    ['full', 'danger-full-access', ['-c', 'sandbox_mode="danger-full-access"']],
    ['own', 'workspace-write', ['-c', 'sandbox_mode="workspace-write"']],
    ['own', undefined, []],
  ])('%s with the role’s %s → %j', (trust, sandbox, args) => {
    expect(codexModeOptions(trust, sandbox)).toEqual(args);
  });
});

describe('an ACP agent’s permission policy by trust', () => {
  it.each<[TurnTrust, 'allow' | 'reject' | 'ask' | undefined, string]>([
    ['answer', 'allow', 'reject'],
    ['answer', 'ask', 'reject'],
    ['work', 'allow', 'ask'],
    ['work', 'reject', 'ask'],
    ['full', 'allow', 'allow'],
    ['own', 'ask', 'ask'],
    ['own', undefined, 'reject'],
  ])('%s with the role’s %s → %s', (trust, policy, expected) => {
    expect(acpPermissionPolicy(trust, policy)).toBe(expected);
  });
});

describe('an ACP agent’s session mode by trust', () => {
  it.each<[string, TurnTrust, string[], string | undefined, string | null]>([
    ['claude-agent-acp', 'answer', CLAUDE_ACP, 'bypassPermissions', 'default'],
    ['claude-agent-acp', 'work', CLAUDE_ACP, undefined, 'acceptEdits'],
    ['claude-agent-acp', 'full', CLAUDE_ACP, undefined, 'default'],
    ['claude-agent-acp', 'own', CLAUDE_ACP, undefined, 'default'],
    ['claude-agent-acp', 'own', CLAUDE_ACP, 'plan', 'plan'],
    ['claude-agent-acp', 'full', CLAUDE_ACP, 'bypassPermissions', 'bypassPermissions'],
    ['claude-agent-acp, a mode it lacks', 'own', CLAUDE_ACP, 'yolo', 'default'],
    ['codex-acp', 'answer', CODEX_ACP, 'full-access', 'read-only'],
    ['codex-acp', 'work', CODEX_ACP, undefined, 'auto'],
    ['codex-acp', 'own', CODEX_ACP, undefined, 'auto'],
    ['codex-acp', 'full', CODEX_ACP, 'full-access', 'full-access'],
    ['an agent of unknown modes', 'answer', ['fast', 'careful'], undefined, null],
    ['an agent without modes', 'answer', [], undefined, null],
  ])('%s at %s (offers %j, role %s) → %s', (_agent, trust, offered, roleMode, mode) => {
    expect(chooseAcpMode(trust, offered, 'auto', roleMode).mode).toBe(mode);
  });

  it('never chooses, by itself, a mode in which the agent decides or asks nobody', () => {
    for (const trust of ['answer', 'work', 'full', 'own'] as const) {
      expect(['auto', 'bypassPermissions']).not.toContain(chooseAcpMode(trust, CLAUDE_ACP, 'auto', undefined).mode);
      expect(chooseAcpMode(trust, CODEX_ACP, 'auto', undefined).mode).not.toBe('full-access');
    }
  });
});
