// Who is calling the app API. The Electron window acts as the installation's first
// owner; a headless client becomes a person by `session.signIn`.
import type { Person } from '../../shared/domain';

export interface ApiSession {
  person: Person | null;
}
