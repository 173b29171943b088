// Agents known to speak the Agent Client Protocol, as presets for the acp adapter: the
// first run looks for their programs on PATH, and the role editor offers their command
// lines. Any other ACP agent works too, with its own command line.
export interface AcpAgentPreset {
  id: 'claude' | 'codex' | 'gemini' | 'goose';
  /** For people: what it is. */
  label: string;
  /** The program and its arguments (run without a shell). */
  command: readonly string[];
  /** How to install it, for people. */
  install: string;
}

export const acpAgentPresets: readonly AcpAgentPreset[] = [
  {
    id: 'claude',
    label: 'Claude (claude-agent-acp)',
    command: ['claude-agent-acp'],
    install: 'npm install -g @agentclientprotocol/claude-agent-acp',
  },
  {
    id: 'codex',
    label: 'Codex (codex-acp)',
    command: ['codex-acp'],
    install: 'npm install -g @zed-industries/codex-acp',
  },
  {
    id: 'gemini',
    label: 'Gemini CLI',
    command: ['gemini', '--experimental-acp'],
    install: 'npm install -g @google/gemini-cli',
  },
  {
    id: 'goose',
    label: 'Goose',
    command: ['goose', 'acp'],
    install: 'see https://block.github.io/goose/',
  },
];

/** The preset whose command line this is, if any. */
export function acpPresetOf(command: readonly string[]): AcpAgentPreset | undefined {
  return acpAgentPresets.find(
    (preset) => preset.command.length === command.length && preset.command.every((arg, i) => arg === command[i]),
  );
}
