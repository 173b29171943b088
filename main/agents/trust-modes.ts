// Each adapter's own permission mode from the trust a turn runs under (DESIGN §12.2, §12.3).
// The OS sandbox is the bound an agent cannot talk its way past; these modes make the
// agent itself keep to the same level, so that what it is refused is refused before it
// tries, and its permission requests reach Parley rather than its own judgement.
//
//   answer: reads what answering needs, edits nothing, runs no shell; every request denied.
//   work:   edits in the working folder; requests wait for a person.
//   full, own: the role's own settings.
//
// openai-compatible and command agents have no mode of their own: the OS sandbox alone.
import type { TurnTrust } from '../../shared/domain';
import type { PermissionPolicy } from './acp-permissions';

export { PERMISSION_TOOL_VARIABLE } from '../role-api/protocol';

/** Claude Code's tools that change files, run commands or reach the network. */
export const CLAUDE_WRITING_TOOLS = ['Bash', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'WebFetch', 'WebSearch'];

/**
 * Claude Code's flags for a turn: `--permission-mode` and, at `answer`, the tools it may
 * not use at all (`--disallowedTools`) and the same as settings, which a project's own
 * `.claude/settings.json` cannot widen. `dontAsk` denies whatever is not allowed already,
 * without a prompt: in `-p` there is nobody to ask. `permissionMode` is the role's setting.
 */
export function claudeCodeModeArgs(trust: TurnTrust, permissionMode: string | undefined): string[] {
  switch (trust) {
    case 'answer':
      return [
        '--permission-mode',
        'dontAsk',
        '--disallowedTools',
        CLAUDE_WRITING_TOOLS.join(','),
        '--settings',
        JSON.stringify({ permissions: { defaultMode: 'dontAsk', deny: CLAUDE_WRITING_TOOLS } }),
      ];
    case 'work':
      // Edits in the working folder go ahead; anything else asks a person, through Parley's MCP server.
      return [
        '--permission-mode',
        'acceptEdits',
        '--disallowedTools',
        'WebFetch,WebSearch',
        '--permission-prompt-tool',
        'mcp__parley__permission',
      ];
    case 'full':
    case 'own':
      return permissionMode ? ['--permission-mode', permissionMode] : [];
  }
}

export type CodexSandbox = 'read-only' | 'workspace-write' | 'danger-full-access';

/**
 * Codex's `-c` overrides for a turn. `codex exec` takes no `--ask-for-approval`, and
 * `exec resume` no `--sandbox`: the config keys work for both. In `exec` nobody can be
 * asked, so `never` is said outright at the levels that bound it: what the sandbox
 * refuses fails, and the model is told so.
 */
export function codexModeOptions(trust: TurnTrust, sandbox: CodexSandbox | undefined): string[] {
  switch (trust) {
    case 'answer':
      return ['-c', 'sandbox_mode="read-only"', '-c', 'approval_policy="never"'];
    case 'work':
      return [
        '-c',
        'sandbox_mode="workspace-write"',
        '-c',
        'sandbox_workspace_write.network_access=false',
        '-c',
        'approval_policy="never"',
      ];
    case 'full':
    case 'own':
      return sandbox ? ['-c', `sandbox_mode=${JSON.stringify(sandbox)}`] : [];
  }
}

/** How an ACP turn answers permission requests: `answer` denies them without asking anyone. */
export function acpPermissionPolicy(trust: TurnTrust, rolePolicy: PermissionPolicy | undefined): PermissionPolicy {
  switch (trust) {
    case 'answer':
      return 'reject';
    case 'work':
      return 'ask';
    case 'full':
    case 'own':
      return rolePolicy ?? 'reject';
  }
}

/**
 * The modes ACP agents offer, by id, from the one that lets the agent do least. Modes in
 * which the agent decides for itself or asks nobody (claude-agent-acp's `auto` and
 * `bypassPermissions`, codex-acp's `full-access`) are never chosen by Parley; a role may
 * still name one for its own runs.
 */
const ASKS_FIRST = ['default', 'manual', 'ask'];
const CODEX_WORKSPACE = 'auto';

export interface AcpModeChoice {
  /** The mode to set, or null to leave the agent's own (it offers none Parley knows). */
  mode: string | null;
  /** One line for people watching the run; null for an agent that offers no modes. */
  says: string | null;
}

/**
 * The session mode for a turn, from what the agent offers. codex-acp's modes are
 * `read-only`, `auto` (its workspace-write) and `full-access`; claude-agent-acp's
 * `default`, `acceptEdits`, `plan`, `auto` (the agent decides) and `bypassPermissions`.
 * An agent that offers `read-only` names its workspace mode `auto`.
 */
export function chooseAcpMode(
  trust: TurnTrust,
  offered: readonly string[],
  current: string | null,
  roleMode: string | undefined,
): AcpModeChoice {
  const has = (id: string) => offered.includes(id);
  const codexLike = has('read-only');
  let wanted: string[];
  let why: string;
  switch (trust) {
    case 'answer':
      wanted = ['read-only', ...ASKS_FIRST];
      why = 'this peer is trusted to get answers only';
      break;
    case 'work':
      wanted = codexLike ? [CODEX_WORKSPACE] : ['acceptEdits', ...ASKS_FIRST];
      why = 'this peer is trusted to work in the role’s folder';
      break;
    case 'full':
    case 'own':
      if (roleMode !== undefined) {
        if (has(roleMode)) return { mode: roleMode, says: `Parley set the agent’s mode to ${roleMode} (the role’s)` };
        return {
          mode: pickFirst([...ASKS_FIRST, ...(codexLike ? [CODEX_WORKSPACE] : [])], offered),
          says: `Parley: the agent offers no mode ${roleMode} (it offers ${offered.join(', ')})`,
        };
      }
      wanted = [...ASKS_FIRST, ...(codexLike ? [CODEX_WORKSPACE] : [])];
      why = 'its permission requests come to Parley';
      break;
  }
  const mode = pickFirst(wanted, offered);
  if (mode === null)
    return {
      mode: null,
      says: offered.length
        ? `Parley: the agent offers no mode Parley knows (${offered.join(', ')}); it keeps ${current ?? 'its own'}, and Parley answers its requests`
        : null,
    };
  return { mode, says: `Parley set the agent’s mode to ${mode} (${why})` };
}

function pickFirst(wanted: readonly string[], offered: readonly string[]): string | null {
  return wanted.find((id) => offered.includes(id)) ?? null;
}

/**
 * The sandbox codex-acp runs its commands in, as `-c sandbox_mode=…` on its command line,
 * always set: without one it needs bubblewrap of its own to run any command. The role's
 * setting at `full` and for its own runs, else the workspace (codex-acp's own `auto` mode);
 * Parley's OS sandbox is the bound at every level, and this keeps the agent to the same one.
 */
export function acpSandboxArgs(trust: TurnTrust, sandbox: CodexSandbox | undefined): string[] {
  switch (trust) {
    case 'answer':
      return ['-c', 'sandbox_mode="read-only"'];
    case 'work':
      return ['-c', 'sandbox_mode="workspace-write"'];
    case 'full':
    case 'own':
      return ['-c', `sandbox_mode=${JSON.stringify(sandbox ?? 'workspace-write')}`];
  }
}
