import type { AdapterName } from '../../shared/domain';
import { acpAdapter } from './acp';
import { claudeCodeAdapter } from './claude-code';
import { codexAdapter } from './codex';
import { commandAdapter } from './command';
import { openAiCompatibleAdapter } from './openai-compatible';
import { scriptedAdapter } from './scripted';
import type { AgentAdapter } from './types';

export const adapters: Record<AdapterName, AgentAdapter> = {
  scripted: scriptedAdapter,
  command: commandAdapter,
  'claude-code': claudeCodeAdapter,
  codex: codexAdapter,
  'openai-compatible': openAiCompatibleAdapter,
  acp: acpAdapter,
};
