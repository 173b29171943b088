// Who reads what waits for a person (./rules.ts `audienceOf` for an approval), said in
// SQL, so a list can keep only what its viewer may read before it applies a limit:
// filtered after the limit, rows nobody in particular reads (another person's, or
// thousands an agent asked for) would crowd out those the viewer was meant to see.
// rules.ts stays the rule; approval-readers.test.ts holds this to it, case by case.
import type { Viewer } from './rules';

/**
 * The approval's audience as one integer: a person's id (> 0), EVERYONE or OWNERS. It
 * reads the columns of `approvals` as `a` and of the joins in `APPROVAL_PLACE_JOINS`.
 */
export const EVERYONE = 0;
export const OWNERS = -1;

/** Each a lookup by primary key: where the approval waits, and an agent conversation's root. */
export const APPROVAL_PLACE_JOINS = `
  LEFT JOIN conversations pc ON a.context_kind = 'conversation' AND pc.id = a.context_id
  LEFT JOIN tasks pk ON a.context_kind = 'task' AND pk.id = a.context_id
  LEFT JOIN threads pt ON a.context_kind = 'thread' AND pt.id = a.context_id
  LEFT JOIN conversations rc ON pt.root_kind = 'conversation' AND rc.id = pt.root_id
  LEFT JOIN tasks rk ON pt.root_kind = 'task' AND rk.id = pt.root_id
  LEFT JOIN threads rt ON pt.root_kind = 'thread' AND rt.id = pt.root_id`;

/** `audienceOf` of an approval target; a place or root that is gone is read by owners. */
export const APPROVAL_AUDIENCE = `CASE a.context_kind
    WHEN 'conversation' THEN coalesce(pc.person_id, ${OWNERS})
    WHEN 'task' THEN CASE WHEN pk.id IS NULL THEN ${OWNERS} ELSE ${EVERYONE} END
    WHEN 'thread' THEN CASE
      WHEN pt.id IS NULL OR pt.root_gone != 0 THEN ${OWNERS}
      WHEN pt.root_kind = 'conversation' THEN coalesce(rc.person_id, ${OWNERS})
      WHEN pt.root_kind = 'task' THEN CASE WHEN rk.id IS NULL THEN ${OWNERS} ELSE ${EVERYONE} END
      WHEN pt.root_id = pt.id THEN CASE WHEN pt.started_by = 'peer' THEN ${EVERYONE} ELSE ${OWNERS} END
      WHEN rt.started_by = 'peer' AND rt.root_id = rt.id AND rt.root_gone = 0 THEN ${EVERYONE}
      ELSE ${OWNERS} END
    ELSE ${OWNERS} END`;

/**
 * The audiences `viewer` is in (`inAudience`), as the three values to bind to
 * `${APPROVAL_AUDIENCE} IN (?, ?, ?)`.
 */
export const audiencesOf = (viewer: Viewer): [number, number, number] => [
  EVERYONE,
  viewer.kind === 'owner' ? OWNERS : EVERYONE,
  viewer.id,
];
