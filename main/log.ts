// A minimal structured logger: one line per event on stderr, so stdout stays free
// for command output (the CLI, `parley serve`'s address line, benchmarks' JSON).
type Fields = Record<string, unknown>;

let quiet = process.env.PARLEY_LOG === 'silent';

function write(level: string, message: string, fields?: Fields): void {
  if (quiet && level !== 'error') return;
  const extra = fields ? ' ' + JSON.stringify(fields) : '';
  process.stderr.write(`${new Date().toISOString()} ${level} ${message}${extra}\n`);
}

export const log = {
  info: (message: string, fields?: Fields) => write('info', message, fields),
  warn: (message: string, fields?: Fields) => write('warn', message, fields),
  error: (message: string, fields?: Fields) => write('error', message, fields),
  setQuiet(value: boolean): void {
    quiet = value;
  },
};
