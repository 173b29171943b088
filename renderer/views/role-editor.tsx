// Create or edit a role: name, description and its agent's settings per adapter,
// validated with the same schema main uses, errors shown next to their fields. Stored
// secrets never come back: environment values show as set (kept, replaced by typing
// NAME=value, or removed), an API key as saved.
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { acpAgentPresets, acpPresetOf } from '../../shared/acp-agents';
import { methods } from '../../shared/api-contract';
import type { ParamsOf } from '../../shared/api-contract';
import type { AdapterName, AgentSettingsUpdate, RoleView, StoredSecret } from '../../shared/domain';
import { TextWithCode } from '../components/text-with-code';
import { Dialog, DialogButtons, useAction } from '../components/ui';
import { messageOf } from '../state/client';
import { useRoles } from '../state/roles';
import { adapterLabel } from './adapter-label';

const adapterHelp: Record<AdapterName, string> = {
  scripted: 'A deterministic rule agent shipped with Parley, for trying things out and for tests.',
  command: 'Any program: the turn’s inputs on stdin, its final output from stdout.',
  'claude-code': 'Anthropic’s Claude Code CLI (`claude`), with Parley’s tools over MCP.',
  codex: 'OpenAI’s Codex CLI (`codex exec`), with Parley’s tools over MCP.',
  'openai-compatible': 'A chat-completions endpoint: Ollama, LM Studio, vLLM, OpenAI…',
  acp: 'Any agent that speaks the Agent Client Protocol — Claude, Codex, Gemini CLI, Goose… — with Parley’s tools over MCP.',
};

interface Form {
  name: string;
  description: string;
  adapter: AdapterName;
  instructions: string;
  turnTimeoutSec: string;
  /** `command` and `acp`: one argument per line; claude-code and codex: the executable. */
  command: string;
  cwd: string;
  /** KEY=value per line: new values, and replacements of stored ones. */
  env: string;
  /** The names whose values are stored, and whether to keep each. */
  storedEnv: Record<string, boolean>;
  input: 'text' | 'json';
  model: string;
  permissionMode: '' | 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan';
  sandbox: '' | 'read-only' | 'workspace-write' | 'danger-full-access';
  permissions: '' | 'allow' | 'reject' | 'ask';
  baseUrl: string;
  apiKey: string;
  temperature: string;
  maxSteps: string;
  requestTimeoutSec: string;
  idleTimeoutSec: string;
  modelTimeoutSec: string;
}

type Errors = Partial<Record<keyof Form | 'form', string>>;
/** The fields typed as text. */
type TextField = { [K in keyof Form]: Form[K] extends string ? K : never }[keyof Form];

function formOf(role: RoleView | null): Form {
  const agent = role?.agent;
  const form: Form = {
    name: role?.name ?? '',
    description: role?.description ?? '',
    adapter: agent?.adapter ?? 'scripted',
    instructions: agent?.instructions ?? '',
    turnTimeoutSec: agent?.turnTimeoutSec !== undefined ? String(agent.turnTimeoutSec) : '',
    command: '',
    cwd: '',
    env: '',
    storedEnv: {},
    input: 'text',
    model: '',
    permissionMode: '',
    sandbox: '',
    permissions: '',
    baseUrl: '',
    apiKey: '',
    temperature: '',
    maxSteps: '',
    requestTimeoutSec: '',
    idleTimeoutSec: '',
    modelTimeoutSec: '',
  };
  if (!agent) return form;
  const stored = (env: Record<string, StoredSecret> | undefined) =>
    Object.fromEntries(Object.keys(env ?? {}).map((name) => [name, true]));
  switch (agent.adapter) {
    case 'command':
      return {
        ...form,
        command: agent.command.join('\n'),
        cwd: agent.cwd ?? '',
        storedEnv: stored(agent.env),
        input: agent.input ?? 'text',
      };
    case 'claude-code':
      return {
        ...form,
        command: agent.command ?? '',
        model: agent.model ?? '',
        permissionMode: agent.permissionMode ?? '',
        cwd: agent.cwd ?? '',
        storedEnv: stored(agent.env),
        modelTimeoutSec: agent.modelTimeoutSec !== undefined ? String(agent.modelTimeoutSec) : '',
      };
    case 'codex':
      return {
        ...form,
        command: agent.command ?? '',
        model: agent.model ?? '',
        sandbox: agent.sandbox ?? '',
        cwd: agent.cwd ?? '',
        storedEnv: stored(agent.env),
        modelTimeoutSec: agent.modelTimeoutSec !== undefined ? String(agent.modelTimeoutSec) : '',
      };
    case 'acp':
      return {
        ...form,
        command: agent.command.join('\n'),
        model: agent.model ?? '',
        permissions: agent.permissions ?? '',
        cwd: agent.cwd ?? '',
        storedEnv: stored(agent.env),
        modelTimeoutSec: agent.modelTimeoutSec !== undefined ? String(agent.modelTimeoutSec) : '',
      };
    case 'openai-compatible':
      return {
        ...form,
        baseUrl: agent.baseUrl,
        model: agent.model,
        temperature: agent.temperature !== undefined ? String(agent.temperature) : '',
        maxSteps: agent.maxSteps !== undefined ? String(agent.maxSteps) : '',
        requestTimeoutSec: agent.requestTimeoutSec !== undefined ? String(agent.requestTimeoutSec) : '',
        idleTimeoutSec: agent.idleTimeoutSec !== undefined ? String(agent.idleTimeoutSec) : '',
      };
    default:
      return form;
  }
}

const optional = (value: string) => (value.trim() === '' ? undefined : value.trim());

/** Builds the agent settings; errors for what cannot even be parsed. */
function settingsOf(form: Form, errors: Errors): AgentSettingsUpdate {
  const number = (field: keyof Form, value: string): number | undefined => {
    if (value.trim() === '') return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) errors[field] = 'must be a number';
    return parsed;
  };
  /** Stored values kept as `{set: true}`, then what was typed; `{}` when every stored one goes. */
  const env = (): Record<string, string | StoredSecret> | undefined => {
    const out: Record<string, string | StoredSecret> = {};
    for (const [name, keep] of Object.entries(form.storedEnv)) if (keep) out[name] = { set: true };
    for (const line of form.env.split('\n')) {
      if (!line.trim()) continue;
      const at = line.indexOf('=');
      if (at <= 0) {
        errors.env = `write one KEY=value per line (“${line.trim()}” has no “=”)`;
        continue;
      }
      out[line.slice(0, at).trim()] = line.slice(at + 1);
    }
    const hadStored = Object.keys(form.storedEnv).length > 0;
    return Object.keys(out).length > 0 || hadStored ? out : undefined;
  };
  const common = {
    instructions: optional(form.instructions),
    turnTimeoutSec: number('turnTimeoutSec', form.turnTimeoutSec),
  };
  switch (form.adapter) {
    case 'scripted':
      return { adapter: 'scripted', ...common };
    case 'command':
      return {
        adapter: 'command',
        command: lines(form.command),
        cwd: optional(form.cwd),
        env: env(),
        input: form.input,
        ...common,
      };
    case 'claude-code':
      return {
        adapter: 'claude-code',
        command: optional(form.command),
        model: optional(form.model),
        permissionMode: form.permissionMode || undefined,
        cwd: optional(form.cwd),
        env: env(),
        modelTimeoutSec: number('modelTimeoutSec', form.modelTimeoutSec),
        ...common,
      };
    case 'codex':
      return {
        adapter: 'codex',
        command: optional(form.command),
        model: optional(form.model),
        sandbox: form.sandbox || undefined,
        cwd: optional(form.cwd),
        env: env(),
        modelTimeoutSec: number('modelTimeoutSec', form.modelTimeoutSec),
        ...common,
      };
    case 'acp':
      return {
        adapter: 'acp',
        command: lines(form.command),
        model: optional(form.model),
        permissions: form.permissions || undefined,
        cwd: optional(form.cwd),
        env: env(),
        modelTimeoutSec: number('modelTimeoutSec', form.modelTimeoutSec),
        ...common,
      };
    case 'openai-compatible': {
      return {
        adapter: 'openai-compatible',
        baseUrl: form.baseUrl.trim(),
        model: form.model.trim(),
        // Left empty, the key saved before stays (main keeps it while the origin does).
        apiKey: optional(form.apiKey),
        temperature: number('temperature', form.temperature),
        maxSteps: number('maxSteps', form.maxSteps),
        requestTimeoutSec: number('requestTimeoutSec', form.requestTimeoutSec),
        idleTimeoutSec: number('idleTimeoutSec', form.idleTimeoutSec),
        ...common,
      };
    }
  }
}

/** Drops undefined fields: the schema is strict about unknown keys, not about missing ones. */
function clean<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** zod's defaults ("Too small: expected string to have >=1 characters") in plain words. */
function readable(issue: {
  code: string;
  message: string;
  minimum?: unknown;
  format?: unknown;
  expected?: unknown;
}): string {
  if (issue.code === 'too_small' && issue.minimum === 1) return 'is required';
  if (issue.code === 'invalid_format' && issue.format === 'url')
    return 'must be a full address, like http://localhost:11434/v1';
  if (issue.code === 'invalid_type' && issue.expected === 'number') return 'must be a number';
  if (issue.code === 'invalid_type' && issue.expected === 'string') return 'is required';
  return issue.message;
}

type Saving = { create: ParamsOf<'roles.create'> } | { update: ParamsOf<'roles.update'> };

function validate(form: Form, role: RoleView | null): { errors: Errors; saving: Saving | null } {
  const errors: Errors = {};
  const agent = clean(settingsOf(form, errors));
  const fields = { name: form.name.trim(), description: form.description.trim(), agent };
  const parsed = role
    ? methods['roles.update'].params.safeParse({ id: role.id, ...fields })
    : methods['roles.create'].params.safeParse(fields);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const [first, second] = issue.path;
      const field = (first === 'agent' ? (second ?? 'adapter') : (first ?? 'form')) as keyof Errors;
      errors[field] ??= readable(issue);
    }
    return { errors, saving: null };
  }
  const saving: Saving = role
    ? { update: parsed.data as ParamsOf<'roles.update'> }
    : { create: parsed.data as ParamsOf<'roles.create'> };
  return { errors, saving };
}

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

  const field = (key: keyof Form, label: string, input: ReactNode, hint?: ReactNode) => (
    <Field key={key} label={label} error={errors[key]} hint={hint}>
      {input}
    </Field>
  );
  const text = (key: TextField, props: { placeholder?: string; type?: string; autoFocus?: boolean } = {}) => (
    <input
      value={form[key]}
      onChange={(event) => set(key, event.target.value as never)}
      aria-invalid={errors[key] ? true : undefined}
      spellCheck={false}
      {...props}
    />
  );
  const area = (key: TextField, rows: number, placeholder?: string) => (
    <textarea
      value={form[key]}
      rows={rows}
      placeholder={placeholder}
      onChange={(event) => set(key, event.target.value as never)}
      aria-invalid={errors[key] ? true : undefined}
      spellCheck={false}
    />
  );
  const cwdField = field(
    'cwd',
    'Working folder',
    text('cwd', { placeholder: '/home/me/project' }),
    'An absolute path; optional.',
  );
  const storedNames = Object.keys(form.storedEnv);
  const envField = (
    <>
      {storedNames.length > 0 && (
        <div className="field">
          <span className="field-label" id={`${formId}-stored`}>
            Stored environment values
          </span>
          <ul className="stored-env" aria-labelledby={`${formId}-stored`}>
            {storedNames.map((name) => {
              const keep = form.storedEnv[name];
              return (
                <li key={name} className={keep ? undefined : 'removed'}>
                  <code>{name}</code>
                  <span className="muted small">{keep ? 'set' : 'will be removed'}</span>
                  <button
                    type="button"
                    className="btn btn-ghost btn-sm"
                    aria-label={`${keep ? 'Remove' : 'Keep'} ${name}`}
                    onClick={() => set('storedEnv', { ...form.storedEnv, [name]: !keep })}
                  >
                    {keep ? 'Remove' : 'Keep'}
                  </button>
                </li>
              );
            })}
          </ul>
          <span className="field-hint">
            Values are never shown again. To replace one, write NAME=new value below. A new command or folder needs them
            given again.
          </span>
        </div>
      )}
      {field(
        'env',
        storedNames.length > 0 ? 'New or replaced values' : 'Environment',
        area('env', 3, 'KEY=value'),
        'One KEY=value per line; optional.',
      )}
    </>
  );
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
          {form.adapter === 'command' && (
            <>
              {field(
                'command',
                'Command and arguments',
                area('command', 3, 'node\n/path/to/agent.js'),
                'One per line; run without a shell.',
              )}
              <div className="form-row">
                {cwdField}
                <Field label="Input on stdin" hint="Plain text, or the whole turn as JSON.">
                  <select value={form.input} onChange={(event) => set('input', event.target.value as Form['input'])}>
                    <option value="text">Text</option>
                    <option value="json">JSON</option>
                  </select>
                </Field>
              </div>
              {envField}
            </>
          )}
          {(form.adapter === 'claude-code' || form.adapter === 'codex') && (
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
                    <select
                      value={form.sandbox}
                      onChange={(event) => set('sandbox', event.target.value as Form['sandbox'])}
                    >
                      <option value="">Codex’s default</option>
                      <option value="read-only">Read only</option>
                      <option value="workspace-write">Write in the workspace</option>
                      <option value="danger-full-access">Full access (dangerous)</option>
                    </select>
                  </Field>
                )}
                {cwdField}
              </div>
              {envField}
            </>
          )}
          {form.adapter === 'acp' && (
            <>
              <Field
                label="Agent program"
                hint={(() => {
                  const preset = acpPresetOf(lines(form.command));
                  return preset
                    ? `Install it with: ${preset.install}`
                    : 'Any program that speaks ACP on stdin and stdout.';
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
              <div className="form-row">{cwdField}</div>
              {envField}
            </>
          )}
          {form.adapter === 'openai-compatible' && (
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
          )}
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

/** A textarea's lines, trimmed, without the empty ones. */
function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}

function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <label className={`field${error ? ' has-error' : ''}`}>
      <span className="field-label">{label}</span>
      {children}
      {error ? (
        <span className="field-error">
          <TextWithCode text={error} />
        </span>
      ) : hint ? (
        <span className="field-hint">{typeof hint === 'string' ? <TextWithCode text={hint} /> : hint}</span>
      ) : null}
    </label>
  );
}
