// Failures whose own words are the wire's or the operating system's, said as what
// happened and what to do about it. Everything else keeps its message.
import { toApiError } from './api/errors';
import { sentence } from './state/client';

/** Why accepting an invitation failed, for the owner who pasted it. */
export function acceptFailure(error: unknown): string {
  const { code, message } = toApiError(error);
  let match = /^(.+?) refused the invitation: (.*)$/s.exec(message);
  if (match) {
    const inviter = match[1]!;
    const why = match[2]!;
    if (/unknown certificate|no valid invitation/.test(why))
      return `${inviter} did not take this invitation: it was used already, it expired, or it was cancelled. Ask ${inviter}’s owner for a new invitation.`;
    if (/revoked/.test(why))
      return `${inviter} revoked its connection with this installation and refuses to pair again.`;
    if (/protocol/.test(why))
      return `${inviter} runs a version of Parley this one cannot talk to: both need the same version. Update the older one, then ask for a new invitation.`;
    return `${inviter} refused the invitation (${why}). Ask ${inviter}’s owner for a new one.`;
  }
  match = /^could not reach (.+?) at (\S+?): (.*)$/s.exec(message);
  if (match) {
    const inviter = match[1]!;
    const address = match[2]!;
    return `Could not reach ${inviter} at ${address}. Check with ${inviter}’s owner that Parley is running there and that this address can be reached from here, then try again.`;
  }
  // The installation says which side revoked when it knows; before it recorded that, it does not.
  if (code === 'revoked') {
    match = /^you revoked (.+?);/.exec(message);
    if (match) return `You revoked the connection with ${match[1]}; these two installations cannot be paired again.`;
    match = /^(.+?) revoked this connection;/.exec(message);
    if (match) return `${match[1]} revoked its connection with this installation and refuses to pair again.`;
    match = /^the connection with (.+?) was revoked;/.exec(message);
    if (match) return `The connection with ${match[1]} was revoked; these two installations cannot be paired again.`;
  }
  return sentence(message);
}
