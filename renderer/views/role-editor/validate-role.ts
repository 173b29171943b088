// The role editor's form read back as what main is asked to save, checked with the same
// schema main uses: each error named after the field it belongs to, in plain words.
import { methods, type ParamsOf } from '../../../shared/api-contract';
import type { AgentSettingsUpdate, RoleView, StoredSecret } from '../../../shared/domain';
import { lines, type Errors, type Form } from './role-form';

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

export type Saving = { create: ParamsOf<'roles.create'> } | { update: ParamsOf<'roles.update'> };

export function validate(form: Form, role: RoleView | null): { errors: Errors; saving: Saving | null } {
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
