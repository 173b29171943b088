// Where a running turn is in its life, as one value. A turn works until either its
// agent cannot succeed (the adapter read a refused key, or its model stopped answering:
// it is failing, its processes ending) or a stop is committed; once the stop is in the
// database the agent is signalled (stopping). A stop wins over a failure: the turn ends
// as stopped. Pure: the run manager keeps one value per turn and moves it here.

export type TurnPhase =
  | { name: 'working' }
  | { name: 'failing'; failure: string }
  | { name: 'stop-committed'; reason: string }
  | { name: 'stopping'; reason: string };

export type TurnEvent =
  /** The turn cannot succeed, and why. */
  | { type: 'fail'; failure: string }
  /** A stop's transaction committed. */
  | { type: 'stop-committed'; reason: string }
  /** The agent's processes are signalled to end. */
  | { type: 'signalled'; reason: string };

type PhaseName = TurnPhase['name'];
type EventType = TurnEvent['type'];

/** Where each event takes each phase; `same` keeps the phase as it is (its reason included). */
export const TURN_TRANSITIONS: { [P in PhaseName]: { [E in EventType]: PhaseName | 'same' } } = {
  working: { fail: 'failing', 'stop-committed': 'stop-committed', signalled: 'stopping' },
  failing: { fail: 'same', 'stop-committed': 'stop-committed', signalled: 'stopping' },
  'stop-committed': { fail: 'same', 'stop-committed': 'same', signalled: 'stopping' },
  stopping: { fail: 'same', 'stop-committed': 'same', signalled: 'same' },
};

export const WORKING: TurnPhase = { name: 'working' };

export function nextPhase(phase: TurnPhase, event: TurnEvent): TurnPhase {
  if (TURN_TRANSITIONS[phase.name][event.type] === 'same') return phase;
  // Each phase but `working` is reached by one event only, which carries what it keeps.
  switch (event.type) {
    case 'fail':
      return { name: 'failing', failure: event.failure };
    case 'stop-committed':
      return { name: 'stop-committed', reason: event.reason };
    case 'signalled':
      return { name: 'stopping', reason: event.reason };
  }
}

/** The stop is in the database: it is not committed again. */
export const stopIsCommitted = (phase: TurnPhase): boolean =>
  phase.name === 'stop-committed' || phase.name === 'stopping';

/** Who or what stopped the turn, once its agent is signalled. */
export const stopReason = (phase: TurnPhase): string | null => (phase.name === 'stopping' ? phase.reason : null);

/** Why the turn cannot succeed, while it fails (a stop after it makes it a stopped turn). */
export const failureOf = (phase: TurnPhase): string | null => (phase.name === 'failing' ? phase.failure : null);
