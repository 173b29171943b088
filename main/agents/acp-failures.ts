// Why an ACP agent's turn failed, in words for people: the JSON-RPC error's readable part,
// and what to do when the agent is not logged in, its key was refused or its model server
// does not answer.
import * as acp from '@agentclientprotocol/sdk';
import { AgentGone } from './acp-agent-child';

/** The part of a JSON-RPC error people can read. */
export function errorText(error: unknown): string {
  if (error instanceof acp.RequestError) {
    const data = error.data as { details?: unknown; message?: unknown } | string | undefined;
    const detail =
      typeof data === 'string'
        ? data
        : typeof data?.details === 'string'
          ? data.details
          : typeof data?.message === 'string'
            ? data.message
            : '';
    return detail && !error.message.includes(detail) ? `${error.message}: ${detail}` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** ACP's "authentication required". */
const AUTH_REQUIRED = -32000;
/** What agents say when their model refused the key (they pass the API's error on as text). */
const KEY_REFUSED =
  /invalid api key|incorrect api key|invalid x-api-key|authentication_error|\b401\b|unauthori[sz]ed|not logged in|please run \/login/i;

/** What an agent's error says when its model server could not be reached at all. */
const UNREACHABLE =
  /ECONNREFUSED|connection refused|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ECONNRESET|ETIMEDOUT|timed? ?out|error sending request|connection error|stream disconnected/i;

/** The turn's failure for an error its session raised; `stderrTail` is what the agent last wrote on stderr. */
export function failureOf(error: unknown, name: string, stderrTail: string): string {
  if (error instanceof AgentGone) {
    const detail = stderrTail.trim().split('\n').slice(-5).join('\n');
    return `${error.message}${detail ? `: ${detail}` : ''}`;
  }
  if (error instanceof acp.RequestError && error.code === AUTH_REQUIRED)
    return `the agent (\`${name}\`) is not logged in here (“${errorText(error)}”). Log in to it once in a terminal on this computer, or set its API key in the role’s environment, then send the message again.`;
  if (KEY_REFUSED.test(errorText(error)))
    return `the agent (\`${name}\`) could not use its model: the key was refused or it is not logged in (“${errorText(error)}”). Set the right key in the role’s environment, or log in to the agent once in a terminal on this computer, then send the message again.`;
  if (UNREACHABLE.test(errorText(error)))
    return `the agent (\`${name}\`) could not reach its model: the model server does not answer (“${errorText(error)}”). Check that the model server is running and reachable from this computer, then send the message again.`;
  return `the agent (\`${name}\`) failed: ${errorText(error)}`;
}
