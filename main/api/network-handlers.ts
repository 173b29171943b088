// The app API's methods for where peers reach this installation (network.*). Everyone
// reads the address; only owners change it or ask for a check.
import { ApiError, type ErrorCode } from '../../shared/api-contract';
import { NetworkError, type NetworkErrorCode, type PeerNetwork } from '../peer-listener/peer-network';
import { requireOwner, requireReader } from './authorize';
import type { HandlerTable } from './handlers';

const networkCodes: Record<NetworkErrorCode, ErrorCode> = {
  invalid: 'invalid',
  in_use: 'conflict',
  not_here: 'invalid',
  denied: 'unavailable',
  fixed: 'conflict',
  failed: 'unavailable',
};

async function networkCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof NetworkError) throw new ApiError(networkCodes[error.code], error.message);
    throw error;
  }
}

/** An invitation needs an address peers can dial; otherwise the reason, as Settings shows it. */
export function requireInvitable(network: PeerNetwork): void {
  if (network.invitable) return;
  throw new ApiError(
    'unavailable',
    network.status().problem ?? 'this installation is not listening for peers, so nobody can be invited',
  );
}

export const networkHandlers: Pick<HandlerTable, 'network.get' | 'network.update' | 'network.check'> = {
  'network.get': ({ services, person }) => {
    requireReader(person);
    return services.network.status();
  },
  'network.update': ({ services, person }, changes) => {
    requireOwner(person, 'change where peers reach this installation');
    return networkCall(() => services.network.update(changes));
  },
  'network.check': ({ services, person }) => {
    requireOwner(person, 'check where peers reach this installation');
    return networkCall(() => services.network.check());
  },
};
