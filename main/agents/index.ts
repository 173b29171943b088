import type { AdapterName } from '../../shared/domain';
import { commandAdapter } from './command';
import { scriptedAdapter } from './scripted';
import type { AgentAdapter } from './types';

export const adapters: Record<AdapterName, AgentAdapter> = {
  scripted: scriptedAdapter,
  command: commandAdapter,
};
