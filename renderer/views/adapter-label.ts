import type { AdapterName } from '../../shared/domain';

/** What each agent adapter is called on screen. */
export const adapterLabel: Record<AdapterName, string> = {
  scripted: 'Scripted (built in)',
  command: 'Command',
  'claude-code': 'Claude Code',
  codex: 'Codex',
  'openai-compatible': 'OpenAI-compatible',
  acp: 'ACP agent',
};
