// A person's word on an agent's tool call, asked of Parley through the role API.
import { callRoleApi } from '../role-api/client';
import type { PermissionQuestion, PersonsAnswer } from './acp-permissions';

/** The answer to a question that a stop cut short. */
export const STOPPED: PersonsAnswer = { outcome: 'cancelled', reason: 'the agent was stopped' };

/**
 * Asks Parley for a person's word on a tool call: the role API's `permission` call, with
 * this turn's token, which answers once someone approves or denies it, or once it is
 * cancelled (Stop, the turn's end, nobody answering in time).
 */
export async function askPerson(question: PermissionQuestion): Promise<PersonsAnswer> {
  const socketPath = process.env.PARLEY_API;
  const token = process.env.PARLEY_TOKEN;
  if (!socketPath || !token) return { outcome: 'cancelled', reason: 'this turn has no role API to ask through' };
  try {
    return await callRoleApi<PersonsAnswer>({ socketPath, token }, 'permission', question);
  } catch (error) {
    return { outcome: 'cancelled', reason: `Parley could not ask: ${(error as Error).message}` };
  }
}
