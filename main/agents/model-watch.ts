// How long an agent may go without reaching its model before its turn is ended. Agent
// CLIs retry a model server that does not answer for minutes (and some wait on a silent
// connection forever), while the person sees only "working" and the turn holds one of
// the few places for running turns. The adapters read, from their CLI's own events,
// whether it is waiting for the model, retrying it, or heard from it; this decides when
// the wait has lasted too long. Pure: the run manager keeps the clock and the timer.

/** What a CLI event says about the agent's model. */
export type ModelSignal =
  /** A request to the model began, and the CLI itself would wait on it without a limit. */
  | 'waiting'
  /** The model did not answer, or answered with an error, and the CLI tries again. */
  | 'retrying'
  /** The model answered. */
  | 'answered';

export interface ModelWatch {
  /** When the current wait for the model began; null while nothing waits on it. */
  since: number | null;
  /** When the model last answered (or the turn started). */
  lastAnswer: number;
}

export const DEFAULT_MODEL_TIMEOUT_SEC = 60;

export function startWatch(now: number): ModelWatch {
  return { since: null, lastAnswer: now };
}

/**
 * The watch after a signal. A retry counts from when the request it retries began: the
 * last answer, since the CLI sends its next request as soon as it has one. A wait that
 * is already counting keeps its start, however many retries follow.
 */
export function observe(watch: ModelWatch, signal: ModelSignal, now: number): ModelWatch {
  switch (signal) {
    case 'answered':
      return { since: null, lastAnswer: now };
    case 'waiting':
      return watch.since === null ? { ...watch, since: now } : watch;
    case 'retrying':
      return watch.since === null ? { ...watch, since: watch.lastAnswer } : watch;
  }
}

/** When the turn is to be ended, failed, unless the model answers first; null when nothing waits. */
export function deadline(watch: ModelWatch, limitMs: number): number | null {
  return watch.since === null ? null : watch.since + limitMs;
}

/** "1st", "2nd", "3rd", "4th" … "11th", "12th", "13th", "21st". */
export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

/** Why a model request failed, in a person's words, from an HTTP status when there is one. */
export function retryReason(status: number | null | undefined): string {
  if (status === 529 || status === 503) return `the model server is overloaded (${status})`;
  if (status === 429) return 'the model server limits how often it may be asked (429)';
  if (typeof status === 'number' && status >= 500) return `the model server fails (${status})`;
  if (typeof status === 'number') return `the model server refuses the request (${status})`;
  return 'the model server does not answer';
}

/** The run's live line while the agent retries: "retrying: the model server does not answer (3rd try)". */
export function retryingLine(reason: string, tryNumber: number): string {
  return `retrying: ${reason} (${ordinal(tryNumber)} try)`;
}

/** The failed turn's sentence when the wait ran out. */
export function unreachableSentence(agent: string, reason: string, limitSec: number, tries: number): string {
  const tried = tries > 1 ? ` after ${tries} tries` : '';
  return `${agent} could not reach its model: ${reason}${tried}, so Parley ended the turn after ${limitSec} s. Check that the model server is running and reachable from this computer, then send the message again (the role’s model timeout says how long to wait).`;
}
