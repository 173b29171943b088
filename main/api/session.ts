// Who is calling the app API, and which sessions are signed in. A headless client
// becomes a person by `session.signIn`: its session is bound to that sign-in token (its
// row), and every call checks that the token still exists and still belongs to the same
// person. The desktop window and in-process callers act as a person directly, bound to
// the person's id, which is never handed out again (DESIGN §11.1).
import type { Person } from '../../shared/domain';

export interface ApiSession {
  person: Person | null;
  /** The sign-in token (its row id) the session signed in with; absent for a session bound to a person's id alone. */
  signInTokenId?: number;
  /** Set by a transport: ends the connection the session lives on (a socket closes), saying why. */
  onEnd?: (reason: string) => void;
}

/** Why a session ended, as its person is told. */
export const sessionEndReasons = {
  removed: 'you were removed from this installation',
  tokenReplaced: 'your sign-in token was replaced',
} as const;

/** The sessions that are signed in, so that removing a person or replacing a token ends theirs at once. */
export class SessionRegistry {
  private readonly live = new Set<ApiSession>();

  add(session: ApiSession): void {
    this.live.add(session);
  }

  /** The transport closed: nothing to end any more. */
  forget(session: ApiSession): void {
    this.live.delete(session);
  }

  /** Signs the session out at once (no call and no event gets through after this), then lets its transport close it. */
  end(session: ApiSession, reason: string): void {
    this.live.delete(session);
    session.person = null;
    session.signInTokenId = undefined;
    session.onEnd?.(reason);
  }

  /** Ends every session of a person, however it is bound. */
  endPerson(personId: number, reason: string): void {
    for (const session of [...this.live]) if (session.person?.id === personId) this.end(session, reason);
  }

  /** Ends every session that signed in with one of these tokens. */
  endTokens(tokenIds: readonly number[], reason: string): void {
    for (const session of [...this.live])
      if (session.signInTokenId !== undefined && tokenIds.includes(session.signInTokenId)) this.end(session, reason);
  }
}
