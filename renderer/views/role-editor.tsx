// Create or edit a role: name, description and its agent's settings per adapter,
// validated with the same schema main uses, errors shown next to their fields. Stored
// secrets never come back: environment values show as set (kept, replaced by typing
// NAME=value, or removed), an API key as saved. The form and its checks, its controls
// and each adapter's settings are in role-editor/.
import { useId, useState, type FormEvent } from 'react';
import { acpAgentPresets } from '../../shared/acp-agents';
import type { AdapterName, RoleView } from '../../shared/domain';
import { Dialog, DialogButtons, useAction } from '../components/ui';
import { messageOf } from '../state/client';
import { useRoles } from '../state/roles';
import { adapterLabel } from './adapter-label';
import { AcpSettings, CliSettings, CommandSettings, OpenAiSettings } from './role-editor/adapter-settings';
import { controlsOf, Field } from './role-editor/form-controls';
import { formOf, type Errors, type Form } from './role-editor/role-form';
import { validate } from './role-editor/validate-role';

const adapterHelp: Record<AdapterName, string> = {
  scripted: 'A deterministic rule agent shipped with Parley, for trying things out and for tests.',
  command: 'Any program: the turn’s inputs on stdin, its final output from stdout.',
  'claude-code': 'Anthropic’s Claude Code CLI (`claude`), with Parley’s tools over MCP.',
  codex: 'OpenAI’s Codex CLI (`codex exec`), with Parley’s tools over MCP.',
  'openai-compatible': 'A chat-completions endpoint: Ollama, LM Studio, vLLM, OpenAI…',
  acp: 'Any agent that speaks the Agent Client Protocol — Claude, Codex, Gemini CLI, Goose… — with Parley’s tools over MCP.',
};

export function RoleEditor({ role, onClose }: { role: RoleView | null; onClose: () => void }) {
  const [form, setForm] = useState<Form>(() => formOf(role));
  const [errors, setErrors] = useState<Errors>({});
  const [busy, run] = useAction();
  const formId = useId();
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { errors: found, saving } = validate(form, role);
    setErrors(found);
    if (Object.keys(found).length > 0 || !saving) return;
    void run(async () => {
      try {
        const store = useRoles.getState();
        if ('update' in saving) await store.update(saving.update);
        else await store.create(saving.create);
        onClose();
      } catch (caught) {
        setErrors({ form: messageOf(caught) });
      }
    });
  };

  const controls = controlsOf(form, errors, set);
  const { field, text, area } = controls;
  const hadKey = role?.hasApiKey === true;

  return (
    <Dialog
      title={role ? `Edit ${role.name}` : 'New role'}
      description="A role is an agent of this installation, with its own conversations and tasks."
      size="lg"
      onClose={onClose}
      footer={
        <DialogButtons
          formId={formId}
          busy={busy}
          submitLabel={role ? 'Save role' : 'Create role'}
          onCancel={onClose}
        />
      }
    >
      <form id={formId} className="form role-form" onSubmit={submit} noValidate>
        <div className="form-row">
          {field(
            'name',
            'Name',
            text('name', { placeholder: 'researcher', autoFocus: true }),
            'Lowercase; peers address it as INSTALLATION/NAME.',
          )}
          {field('description', 'Description', text('description', { placeholder: 'Finds and checks facts' }))}
        </div>
        <Field label="Agent" error={errors.adapter} hint={adapterHelp[form.adapter]}>
          <select
            value={form.adapter}
            onChange={(event) => {
              const adapter = event.target.value as AdapterName;
              // An ACP agent starts from the first known one rather than an empty command line.
              setForm((f) => ({
                ...f,
                adapter,
                command: adapter === 'acp' && !f.command.trim() ? acpAgentPresets[0]!.command.join('\n') : f.command,
              }));
            }}
          >
            {(Object.keys(adapterLabel) as AdapterName[]).map((adapter) => (
              <option key={adapter} value={adapter}>
                {adapterLabel[adapter]}
              </option>
            ))}
          </select>
        </Field>
        <fieldset className="adapter-settings">
          <legend>{adapterLabel[form.adapter]} settings</legend>
          {form.adapter === 'command' && <CommandSettings controls={controls} />}
          {(form.adapter === 'claude-code' || form.adapter === 'codex') && <CliSettings controls={controls} />}
          {form.adapter === 'acp' && <AcpSettings controls={controls} />}
          {form.adapter === 'openai-compatible' && <OpenAiSettings controls={controls} hadKey={hadKey} />}
          {field(
            'instructions',
            'Instructions',
            area('instructions', 3, 'Extra instructions for every turn (optional)'),
          )}
          {field(
            'turnTimeoutSec',
            'Time limit per turn (seconds)',
            text('turnTimeoutSec', { placeholder: '1800' }),
            'A turn that works longer is stopped.',
          )}
          {(form.adapter === 'claude-code' || form.adapter === 'codex' || form.adapter === 'acp') &&
            field(
              'modelTimeoutSec',
              'Give up when unreachable (seconds)',
              text('modelTimeoutSec', { placeholder: '60' }),
              'How long the agent may go without an answer from its AI server before its turn ends, failed, saying why.',
            )}
        </fieldset>
        {errors.form && (
          <p className="field-error" role="alert">
            {errors.form}
          </p>
        )}
      </form>
    </Dialog>
  );
}
