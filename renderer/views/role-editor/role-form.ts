// The role editor's form: its fields as typed, read from a role being edited (or empty
// for a new one). Stored secrets never come back: environment values are listed by name,
// an API key not at all.
import type { AdapterName, RoleView, StoredSecret } from '../../../shared/domain';

export interface Form {
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

export type Errors = Partial<Record<keyof Form | 'form', string>>;
/** The fields typed as text. */
export type TextField = { [K in keyof Form]: Form[K] extends string ? K : never }[keyof Form];

export function formOf(role: RoleView | null): Form {
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

/** A textarea's lines, trimmed, without the empty ones. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
}
