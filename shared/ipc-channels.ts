// The names of the three IPC channels between the window's preload and main, said once.
// This file imports nothing, so the sandboxed preload's bundle can carry it whole.

/** App API calls from the page, answered with an envelope. */
export const INVOKE_CHANNEL = 'parley:invoke';
/** Events main pushes to the page. */
export const EVENT_CHANNEL = 'parley:event';
/** The preload tells main the page now listens, so what main holds for it can be sent. */
export const LISTENING_CHANNEL = 'parley:listening';

export type IpcChannel = typeof INVOKE_CHANNEL | typeof EVENT_CHANNEL | typeof LISTENING_CHANNEL;
