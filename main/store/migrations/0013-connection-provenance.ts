import type { Db } from '../database';

/**
 * Who revoked a connection (this side, or the peer: each side tells its owner the
 * right one), and where the address we dial came from (the invitation we accepted, or
 * what the peer announced), shown to owners beside it. For connections from before,
 * the inviter's side learnt the address from the peer; who revoked is not known.
 */
export function recordConnectionProvenance(db: Db): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN revoked_by TEXT CHECK (revoked_by IN ('us', 'peer'));
    ALTER TABLE connections ADD COLUMN address_from TEXT CHECK (address_from IN ('invitation', 'peer'));
    UPDATE connections SET address_from =
      CASE WHEN EXISTS (SELECT 1 FROM invitations WHERE invitations.connection_id = connections.id)
           THEN 'peer' ELSE 'invitation' END
      WHERE address IS NOT NULL;
  `);
}
