// What the openai-compatible worker tells Parley: OpenAiEvent JSON lines on stdout, with
// the turn's API key blotted out of every one, and the error that ends a turn in words
// shown to the user.
import type { OpenAiEvent } from './openai-compatible';

let apiKey: string | null = null;

/** The key to keep out of everything written from now on. */
export function hideApiKey(key: string | null): void {
  apiKey = key;
}

export const scrub = (text: string) => (apiKey ? text.split(apiKey).join('[api key]') : text);

export function emit(event: OpenAiEvent): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

export const live = (text: string) => emit({ type: 'live', text: scrub(text) });

/** A failure of the turn whose message is shown as it is. */
export class TurnError extends Error {}
