// The settings of each kind of agent in the role editor: what its process is started
// with, or, for an openai-compatible role, where its model is served.
import { acpAgentPresets, acpPresetOf } from '../../../shared/acp-agents';
import { EnvironmentFields } from './environment-fields';
import { Field, type Controls } from './form-controls';
import { lines, type Form } from './role-form';

const cwdField = ({ field, text }: Controls) =>
  field('cwd', 'Working folder', text('cwd', { placeholder: '/home/me/project' }), 'An absolute path; optional.');

export function CommandSettings({ controls }: { controls: Controls }) {
  const { form, set, field, area } = controls;
  return (
    <>
      {field(
        'command',
        'Command and arguments',
        area('command', 3, 'node\n/path/to/agent.js'),
        'One per line; run without a shell.',
      )}
      <div className="form-row">
        {cwdField(controls)}
        <Field label="Input on stdin" hint="Plain text, or the whole turn as JSON.">
          <select value={form.input} onChange={(event) => set('input', event.target.value as Form['input'])}>
            <option value="text">Text</option>
            <option value="json">JSON</option>
          </select>
        </Field>
      </div>
      <EnvironmentFields controls={controls} />
    </>
  );
}

/** Claude Code's and Codex's: the CLI to run and how far it may act. */
export function CliSettings({ controls }: { controls: Controls }) {
  const { form, errors, set, field, text } = controls;
  return (
    <>
      <div className="form-row">
        {field(
          'command',
          'Executable',
          text('command', { placeholder: form.adapter === 'codex' ? 'codex' : 'claude' }),
          'Found on PATH when empty.',
        )}
        {field('model', 'Model', text('model', { placeholder: 'default' }))}
      </div>
      <div className="form-row">
        {form.adapter === 'claude-code' ? (
          <Field label="Permission mode" error={errors.permissionMode}>
            <select
              value={form.permissionMode}
              onChange={(event) => set('permissionMode', event.target.value as Form['permissionMode'])}
            >
              <option value="">Claude Code’s default</option>
              <option value="default">Ask (default)</option>
              <option value="acceptEdits">Accept edits</option>
              <option value="plan">Plan only</option>
              <option value="bypassPermissions">Bypass permissions</option>
            </select>
          </Field>
        ) : (
          <Field label="Sandbox" error={errors.sandbox}>
            <select value={form.sandbox} onChange={(event) => set('sandbox', event.target.value as Form['sandbox'])}>
              <option value="">Codex’s default</option>
              <option value="read-only">Read only</option>
              <option value="workspace-write">Write in the workspace</option>
              <option value="danger-full-access">Full access (dangerous)</option>
            </select>
          </Field>
        )}
        {cwdField(controls)}
      </div>
      <EnvironmentFields controls={controls} />
    </>
  );
}

export function AcpSettings({ controls }: { controls: Controls }) {
  const { form, errors, set, field, text, area } = controls;
  return (
    <>
      <Field
        label="Agent program"
        hint={(() => {
          const preset = acpPresetOf(lines(form.command));
          return preset ? `Install it with: ${preset.install}` : 'Any program that speaks ACP on stdin and stdout.';
        })()}
      >
        <select
          value={acpPresetOf(lines(form.command))?.id ?? 'other'}
          onChange={(event) => {
            const preset = acpAgentPresets.find((p) => p.id === event.target.value);
            if (preset) set('command', preset.command.join('\n'));
          }}
        >
          {acpAgentPresets.map((preset) => (
            <option key={preset.id} value={preset.id}>
              {preset.label}
            </option>
          ))}
          <option value="other">Another ACP agent</option>
        </select>
      </Field>
      {field(
        'command',
        'Command and arguments',
        area('command', 2, 'claude-agent-acp'),
        'One per line; run without a shell.',
      )}
      <div className="form-row">
        {field('model', 'Model', text('model', { placeholder: 'the agent’s default' }))}
        <Field
          label="Tool permissions"
          error={errors.permissions}
          hint="When the agent asks to use a tool. Parley’s own tools are always allowed; “Ask a person” waits for whoever the conversation or task is for."
        >
          <select
            value={form.permissions}
            onChange={(event) => set('permissions', event.target.value as Form['permissions'])}
          >
            <option value="">Reject (default)</option>
            <option value="reject">Reject</option>
            <option value="allow">Allow once</option>
            <option value="ask">Ask a person</option>
          </select>
        </Field>
      </div>
      <div className="form-row">{cwdField(controls)}</div>
      <EnvironmentFields controls={controls} />
    </>
  );
}

/** `hadKey`: an API key is saved, and stays when the field is left empty. */
export function OpenAiSettings({ controls, hadKey }: { controls: Controls; hadKey: boolean }) {
  const { field, text } = controls;
  return (
    <>
      <div className="form-row">
        {field('baseUrl', 'Base URL', text('baseUrl', { placeholder: 'http://localhost:11434/v1' }))}
        {field('model', 'Model', text('model', { placeholder: 'llama3.1' }))}
      </div>
      {field(
        'apiKey',
        'API key',
        text('apiKey', {
          type: 'password',
          placeholder: hadKey ? 'Saved — leave empty to keep it' : 'optional',
        }),
        'Sent as a bearer token; never shown again.',
      )}
      <div className="form-row">
        {field('temperature', 'Temperature', text('temperature', { placeholder: '0–2' }))}
        {field('maxSteps', 'Tool rounds per turn', text('maxSteps', { placeholder: '1–100' }))}
      </div>
      <div className="form-row">
        {field(
          'requestTimeoutSec',
          'Wait for the first token (s)',
          text('requestTimeoutSec', { placeholder: '300' }),
          'How long the server may take to start answering, while it loads what it serves.',
        )}
        {field(
          'idleTimeoutSec',
          'Wait between tokens (s)',
          text('idleTimeoutSec', { placeholder: '120' }),
          'How long a streamed answer may pause before the turn fails.',
        )}
      </div>
    </>
  );
}
