// What one stranger may hold on Parley's network ports before it proves who it is, and
// for how long. A connection is unauthenticated from its first byte until a peer's
// hello is accepted (the peer port) or a person signs in on it (the app API); those
// are capped in number and in time, so a flood of half-open connections neither uses
// up the process's file descriptors nor keeps anyone else out for long. Connections
// that did authenticate are not capped here: each needs a pinned certificate or a
// sign-in token. docs/security.md lists these numbers; keep the two in step.

/** Unauthenticated connections held at once on one port, from everyone together. */
export const MAX_UNAUTHENTICATED = 128;
/** Unauthenticated connections held at once on one port from one remote address. */
export const MAX_UNAUTHENTICATED_PER_ADDRESS = 32;

/** A TLS handshake on the peer port must finish within this. */
export const TLS_HANDSHAKE_TIMEOUT_MS = 5_000;
/** An HTTP request's headers must arrive within this (the WebSocket upgrade is one). */
export const HEADERS_TIMEOUT_MS = 5_000;
/** A whole HTTP request, body included, must arrive within this. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** An idle keep-alive HTTP connection is closed after this. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often the HTTP servers look for requests over their time; a request may run over by up to this. */
export const TIMEOUT_CHECK_MS = 1_000;
/** After a peer's WebSocket opens, its hello must come within this. */
export const HELLO_TIMEOUT_MS = 5_000;
/** After an app API WebSocket opens, `session.signIn` must succeed within this. */
export const SIGN_IN_TIMEOUT_MS = 5_000;
/** A signed-in app API socket is pinged this often and closed when a ping goes unanswered. */
export const API_PING_MS = 30_000;
