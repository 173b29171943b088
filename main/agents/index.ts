import type { AdapterName } from '../../shared/domain';
import { commandAdapter } from './command';
import { scriptedAdapter } from './scripted';
import type { AgentAdapter } from './types';

/** An adapter that is declared but not built yet fails its turns with a clear message. */
function notYet(name: string): AgentAdapter {
  return {
    prepare() {
      throw new Error(`the ${name} adapter is not available in this version of Parley yet`);
    },
  };
}

export const adapters: Record<AdapterName, AgentAdapter> = {
  scripted: scriptedAdapter,
  command: commandAdapter,
  'claude-code': notYet('claude-code'),
  codex: notYet('codex'),
  'openai-compatible': notYet('openai-compatible'),
};
