// A turn's sandbox wrap made ahead of it, when the run's previous turn ended: the wrap
// (bubblewrap's arguments, built from the policy and the disk) is most of what the
// sandbox adds to a turn's start that Parley can move. Whether one made earlier may
// serve a turn is this pure function of what the wrap read then and reads now; the
// policy is computed afresh for every turn, so a role made since, a changed trust level
// or model endpoint makes it unequal, and the turn is wrapped as it starts.
import path from 'node:path';
import type { WrapRequest } from './sandbox';

/** Everything a wrap's result follows from. */
export interface WrapInputs extends WrapRequest {
  /** Parley's working folder, which the runtime resolves against and looks into. */
  workingDir: string;
  /** `diskFacts` of the paths the wrap reads (disk-facts.ts). */
  disk: string;
  /** `mountPointsNeeded`: the files the runtime would make to keep missing paths unwritable. */
  mountPoints: readonly string[];
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => equal(value, b[i]));
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) => key in b && equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/** Whether the wrap made from `ahead` is the one `now` would make. */
export function mayServe(ahead: WrapInputs, now: WrapInputs): boolean {
  return equal(ahead, now);
}

const GLOB = /[*?[\]{}]/;

/**
 * Whether a wrap of these inputs may be made ahead at all. Not when the runtime would
 * make files for it: to keep a missing dangerous name unwritable inside a writable folder
 * (`.claude/commands` in the home) it makes an empty one to mount over, and removes it
 * only once no wrap of its is held; a wrap held between turns would leave it there. Not
 * for a root or a pattern either: the runtime lists folders for those, which the disk's
 * facts do not cover.
 */
export function mayWrapAhead(inputs: WrapInputs): boolean {
  if (inputs.mountPoints.length > 0) return false;
  const { denyRead, allowRead, allowWrite, denyWrite } = inputs.policy.filesystem;
  const all = [...denyRead, ...allowRead, ...allowWrite, ...denyWrite, ...inputs.ownUnwritable];
  return !all.some((entry) => path.resolve(entry) === path.parse(path.resolve(entry)).root || GLOB.test(entry));
}
