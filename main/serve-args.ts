// The command line of `parley serve`, read and checked in one place: every option
// through one schema, every refusal a sentence that names the option and says what to
// pass instead.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isIP } from 'node:net';
import { z } from 'zod';
import { nameProblem, oneLineProblem } from '../shared/domain';
import { dhtBootstrapFromEnv, dhtBootstrapText, type DhtBootstrap } from './net/dht-bootstrap';
import { DNS_NAME, isUnspecifiedHost } from './net/hosts';
import { splitAddress } from './peer-listener/peer-settings';

const port = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a port number, 0–65535 (0 picks a free one)')
  .transform(Number)
  .refine((n) => n <= 65535, 'must be a port number, 0–65535 (0 picks a free one)');

/** An address to listen on: an IP address (0.0.0.0 or :: for every interface) or localhost. */
const listenHost = z
  .string()
  .transform((value) => (value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value))
  .refine(
    (value) => isIP(value) !== 0 || value === 'localhost',
    'must be an IP address to listen on, such as 127.0.0.1 (this machine only), 192.168.1.20, or 0.0.0.0 (every interface)',
  );

/** HOST or HOST:PORT (the peer port when no port is given), as the desktop app's Settings take it. */
const advertise = z
  .string()
  .refine((value) => {
    const parts = splitAddress(value);
    return (
      parts !== null &&
      (isIP(parts.host) !== 0 || DNS_NAME.test(parts.host)) &&
      (parts.port === null || (parts.port >= 1 && parts.port <= 65535))
    );
  }, 'must be HOST or HOST:PORT, such as parley.example.org:4600 or [2001:db8::7]:4600')
  .refine(
    (value) => !isUnspecifiedHost(splitAddress(value)?.host ?? ''),
    'cannot be 0.0.0.0 or ::, which no peer can dial: give the address or name by which peers reach this machine',
  );

const withoutControls = (problem: (value: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: 'custom', message });
};

export const serveArgs = z.strictObject({
  data: z
    .string()
    .min(1, 'must name a folder')
    .superRefine(withoutControls(oneLineProblem))
    .default(path.join(os.homedir(), '.parley')),
  name: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .regex(/^[^\s/]+$/, 'must be one word without "/" (it is how peers address you: NAME/ROLE)')
    .superRefine(withoutControls(nameProblem))
    .optional(),
  'ui-host': listenHost.default('127.0.0.1'),
  'peer-host': listenHost.default('127.0.0.1'),
  advertise: advertise.optional(),
  'ui-port': port.default(0),
  'peer-port': port.default(0),
  /** Which DHT to join: HOST:PORT,… or off (default: PARLEY_DHT_BOOTSTRAP, else the public one). */
  'dht-bootstrap': dhtBootstrapText.optional(),
  /** Off the DHT: peers reach this installation only at its address. */
  'no-dht': z.boolean().optional(),
  /** Also serve as a blind relay on the DHT for people who add it (its key goes in serve.json). */
  relay: z.boolean().optional(),
  host: z
    .undefined({
      error:
        'was replaced by --ui-host (the UI and app API) and --peer-host (the port peers dial), which are set apart; and --advertise HOST:PORT says what invitations carry',
    })
    .optional(),
});
export type ServeOptions = z.output<typeof serveArgs>;

/** The options as given (before defaults), e.g. for tests and the demo. */
export type ServeInput = z.input<typeof serveArgs>;

const optionNames = [
  'data',
  'name',
  'ui-host',
  'peer-host',
  'advertise',
  'ui-port',
  'peer-port',
  'dht-bootstrap',
  'host',
] as const;
const flagNames = ['no-dht', 'relay'] as const;

export type ParsedServeArgs = { ok: true; options: ServeOptions } | { ok: false; message: string };

/** Reads `parley serve`'s arguments (and PARLEY_DHT_BOOTSTRAP); a refusal names each option that is wrong and why. */
export function parseServeArgs(args: string[], env: NodeJS.ProcessEnv = process.env): ParsedServeArgs {
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        ...Object.fromEntries(optionNames.map((name) => [name, { type: 'string' as const }])),
        ...Object.fromEntries(flagNames.map((name) => [name, { type: 'boolean' as const }])),
      },
    }));
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const parsed = serveArgs.safeParse(values);
  if (!parsed.success) {
    return {
      ok: false,
      message: parsed.error.issues.map((issue) => `--${issue.path.join('.')} ${issue.message}`).join('; '),
    };
  }
  const options = parsed.data;
  if (options['no-dht'] && options['dht-bootstrap'] && options['dht-bootstrap'].kind !== 'off')
    return { ok: false, message: '--no-dht and --dht-bootstrap HOST:PORT,… contradict each other: pass one of them' };
  if (!options['no-dht'] && !options['dht-bootstrap']) {
    const fromEnv = dhtBootstrapFromEnv(env);
    if (!fromEnv.ok) return { ok: false, message: fromEnv.message };
    if (options.relay && fromEnv.bootstrap.kind === 'off')
      return {
        ok: false,
        message: '--relay serves on the DHT, which PARLEY_DHT_BOOTSTRAP=off turns off: give --dht-bootstrap',
      };
  }
  if (options.relay && (options['no-dht'] || options['dht-bootstrap']?.kind === 'off'))
    return {
      ok: false,
      message: '--relay serves on the DHT, so it needs the DHT: drop --no-dht (or --dht-bootstrap off)',
    };
  return { ok: true, options };
}

/** The DHT the flags choose; undefined leaves it to PARLEY_DHT_BOOTSTRAP. */
export function dhtOfServe(options: ServeOptions): DhtBootstrap | undefined {
  if (options['no-dht']) return { kind: 'off' };
  return options['dht-bootstrap'];
}

/** Warnings for a start that works but may not be what was meant. */
export function serveWarnings(options: ServeOptions): string[] {
  const warnings: string[] = [];
  if (isUnspecifiedHost(options['peer-host']) && !options.advertise)
    warnings.push(
      `peers can reach this Parley on every interface (--peer-host ${options['peer-host']}), but invitations need the address they should dial: pass --advertise HOST:PORT`,
    );
  return warnings;
}
