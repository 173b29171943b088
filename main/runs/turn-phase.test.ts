// A turn's phases and what moves them: every phase against every event.
import { describe, expect, it } from 'vitest';
import {
  failureOf,
  nextPhase,
  stopIsCommitted,
  stopReason,
  TURN_TRANSITIONS,
  type TurnEvent,
  type TurnPhase,
} from './turn-phase';

const working: TurnPhase = { name: 'working' };
const failing: TurnPhase = { name: 'failing', failure: 'the key was refused' };
const committed: TurnPhase = { name: 'stop-committed', reason: 'Stopped by dave' };
const stopping: TurnPhase = { name: 'stopping', reason: 'Stopped by dave' };

const fail: TurnEvent = { type: 'fail', failure: 'the model stopped answering' };
const stop: TurnEvent = { type: 'stop-committed', reason: 'Stopped by the time limit (1 min)' };
const signal: TurnEvent = { type: 'signalled', reason: 'Stopped by the time limit (1 min)' };

describe('a turn’s phase', () => {
  const cases: [TurnPhase, TurnEvent, TurnPhase][] = [
    // Working: a failure fails it, a committed stop stops it.
    [working, fail, { name: 'failing', failure: 'the model stopped answering' }],
    [working, stop, { name: 'stop-committed', reason: 'Stopped by the time limit (1 min)' }],
    [working, signal, { name: 'stopping', reason: 'Stopped by the time limit (1 min)' }],
    // Failing: the first failure is the one told; a stop still wins.
    [failing, fail, failing],
    [failing, stop, { name: 'stop-committed', reason: 'Stopped by the time limit (1 min)' }],
    [failing, signal, { name: 'stopping', reason: 'Stopped by the time limit (1 min)' }],
    // The stop committed: not committed again, and no failure now; the signal follows.
    [committed, fail, committed],
    [committed, stop, committed],
    [committed, signal, { name: 'stopping', reason: 'Stopped by the time limit (1 min)' }],
    // Stopping: the first stop's reason stays.
    [stopping, fail, stopping],
    [stopping, stop, stopping],
    [stopping, signal, stopping],
  ];

  it.each(cases)('%o on %o is %o', (phase, event, next) => {
    expect(nextPhase(phase, event)).toEqual(next);
    const target = TURN_TRANSITIONS[phase.name][event.type];
    expect(next.name).toBe(target === 'same' ? phase.name : target);
  });

  it('covers every phase against every event', () => {
    const names = (Object.keys(TURN_TRANSITIONS) as TurnPhase['name'][]).flatMap((phase) =>
      Object.keys(TURN_TRANSITIONS[phase]).map((event) => `${phase} ${event}`),
    );
    expect(cases.map(([phase, event]) => `${phase.name} ${event.type}`).sort()).toEqual(names.sort());
  });

  it.each([
    [working, false, null, null],
    [failing, false, null, 'the key was refused'],
    [committed, true, null, null],
    [stopping, true, 'Stopped by dave', null],
  ] as const)('%o: stop committed %s, stopped by %s, failure %s', (phase, committedStop, reason, failure) => {
    expect(stopIsCommitted(phase)).toBe(committedStop);
    expect(stopReason(phase)).toBe(reason);
    expect(failureOf(phase)).toBe(failure);
  });
});
