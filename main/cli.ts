// The `parley` command. Agents use it to act (context, report, history, send,
// reply); people use it to run Parley headless (`parley serve`).
//
// Every agent action starts this, so it loads only what the command needs: the agent
// commands load the role API client (node:net, no schema library) and nothing else;
// `serve` and `mcp` are loaded on demand. It is built as CommonJS (dist/cli.cjs), which
// Node starts without its ES module loader (scripts/build.mjs).
import { readFileSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { callRoleApi, ConnectError } from './role-api/client';
import { exitCodes, RoleApiError } from './role-api/errors';
import { peerRoleProblem } from './role-api/peer-role';
import type { RoleApiCommand } from './role-api/protocol';

const USAGE = `Usage: parley <command> [options]

Commands for agents (need PARLEY_TOKEN and PARLEY_API, which Parley sets for each turn):
  parley context                       this run's context and root, as JSON
  parley report TEXT                   post TEXT to the root: the person's conversation or the task's log
  parley history PEER/ROLE             everything between this role and PEER/ROLE
  parley send --to PEER/ROLE TEXT      send TEXT to a peer's role, in the agent conversation for this topic
  parley reply TEXT                    answer in the agent conversation this run works in
  parley peers                         whom this role can ask: each connection, its state, the roles it lets you address
  parley mcp                           the same six commands as tools of a stdio MCP server

Commands for people:
  parley serve [--data DIR] [--name NAME] [--ui-host 127.0.0.1] [--ui-port N]
               [--peer-host 127.0.0.1] [--peer-port N] [--advertise HOST:PORT]
                                       run Parley headless: the UI and the app API (on loopback by default),
                                       and the port peers dial; invitations carry --advertise
  parley help                          this text

TEXT may be given as arguments or, when it is "-", read from standard input.
`;

class UsageError extends Error {}

function fail(code: number, message: string): never {
  process.stderr.write(`parley: ${message}\n`);
  process.exit(code);
}

function textFrom(positionals: string[], what: string): string {
  if (positionals.length === 1 && positionals[0] === '-') return readFileSync(0, 'utf8');
  const text = positionals.join(' ');
  if (!text.trim()) throw new UsageError(`${what} needs TEXT`);
  return text;
}

async function roleCommand(command: Exclude<RoleApiCommand, 'permission'>, args: string[]): Promise<void> {
  let body: object;
  switch (command) {
    case 'context':
    case 'peers':
      // No parseArgs here: loading it is a tenth of what these commands add to a bare node start.
      if (args.length > 0) throw new UsageError(`${command} takes no arguments`);
      body = {};
      break;
    case 'report':
    case 'reply': {
      const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
      body = { text: textFrom(positionals, command) };
      break;
    }
    case 'history': {
      const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
      if (positionals.length !== 1) throw new UsageError('history needs exactly one PEER/ROLE');
      const problem = peerRoleProblem(positionals[0]!);
      if (problem) throw new UsageError(`"${positionals[0]}" ${problem}`);
      body = { with: positionals[0] };
      break;
    }
    case 'send': {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        strict: true,
        options: { to: { type: 'string' } },
      });
      if (!values.to) throw new UsageError('send needs --to PEER/ROLE');
      const problem = peerRoleProblem(values.to);
      if (problem) throw new UsageError(`--to "${values.to}" ${problem}`);
      body = { to: values.to, text: textFrom(positionals, 'send') };
      break;
    }
  }
  const token = process.env.PARLEY_TOKEN;
  const socketPath = process.env.PARLEY_API;
  if (!token || !socketPath)
    fail(
      exitCodes.unauthenticated,
      'PARLEY_TOKEN and PARLEY_API are not set: this command is for agents that Parley runs',
    );
  const result = await callRoleApi({ socketPath, token }, command, body);
  const pretty = command === 'context' || command === 'history' || command === 'peers';
  answerAndExit(JSON.stringify(result, null, pretty ? 2 : 0) + '\n');
}

/**
 * Writes the answer and ends the process there: nothing is left to do, and letting the
 * loop wind down (stdout's stream, the connection's teardown) is about a millisecond of
 * a 30 ms start. A reader that has gone away (EPIPE) wanted no more; stdout that someone
 * made non-blocking and is full (EAGAIN) gets the rest through the stream.
 */
function answerAndExit(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN') {
      // The same rule as below: only a reader that has gone away ends it quietly.
      const done = (failure?: Error | null) => {
        if (failure && (failure as NodeJS.ErrnoException).code !== 'EPIPE') fail(1, failure.message);
        process.exit(0);
      };
      process.stdout.once('error', done);
      process.stdout.write(bytes.subarray(written), done);
      return;
    }
    if (code !== 'EPIPE') throw error;
  }
  process.exit(0);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    case 'serve': {
      const { serveCommand } = await import('./serve');
      await serveCommand(rest);
      return;
    }
    case 'mcp': {
      if (rest.length > 0) throw new UsageError('mcp takes no arguments');
      const { mcpCommand } = await import('./role-api/mcp-server');
      await mcpCommand(rest);
      return;
    }
    case 'context':
    case 'report':
    case 'history':
    case 'send':
    case 'reply':
    case 'peers':
      await roleCommand(command, rest);
      return;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) fail(exitCodes.usage, `${error.message}\n\n${USAGE}`);
  if (error instanceof RoleApiError) fail(exitCodes[error.code], error.message);
  if (error instanceof ConnectError) fail(exitCodes.connect, error.message);
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
    fail(exitCodes.usage, `${(error as Error).message}\n\n${USAGE}`);
  fail(1, (error as Error).stack ?? String(error));
});
