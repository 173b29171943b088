// The one API client every store calls through. main.tsx sets it once at start-up;
// tests of stores may set a fake.
import type { MethodName, ParamsOf, ResultOf } from '../../shared/api-contract';
import type { ApiClient } from '../api/client';
import { toApiError } from '../api/errors';

let current: ApiClient | null = null;

export function setApiClient(client: ApiClient): void {
  current = client;
}

export function apiClient(): ApiClient {
  if (!current) throw new Error('the API client is not set (main.tsx sets it before rendering)');
  return current;
}

/** One typed app API call; failures are ApiErrors with a stable code. */
export async function call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  try {
    return await apiClient().invoke(method, params);
  } catch (error) {
    throw toApiError(error);
  }
}

/** A failure as one readable sentence for the UI. */
export function messageOf(error: unknown): string {
  return sentence(toApiError(error).message);
}

/** "no such role" → "No such role." */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return trimmed;
  const capital = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}

/** True when the failure means the object is gone (deleted, or no longer readable). */
export function isNotFound(error: unknown): boolean {
  return toApiError(error).code === 'not_found';
}
