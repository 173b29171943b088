// Two or more `parley serve` processes paired for real through their app APIs, and a
// question asked across them the way a person would: in a conversation with a
// scripted role that relays it to a peer's role and reports the answer back.
import type { ApiClient } from './api-client';
import type { ServeProcess } from './serve-process';

export interface ServeNode {
  name: string;
  serve: ServeProcess;
  api: ApiClient;
}

export async function node(serve: ServeProcess, name: string): Promise<ServeNode> {
  return { name, serve, api: await serve.connect() };
}

/** `inviter` invites `acceptor`; each exposes its roles to the other. Resolves once both see the link. */
export async function pairNodes(
  inviter: ServeNode,
  inviterRoles: string[],
  acceptor: ServeNode,
  acceptorRoles: string[],
): Promise<void> {
  const { code } = await inviter.api.call('connections.invite', { roles: inviterRoles });
  await acceptor.api.call('connections.accept', { code, roles: acceptorRoles });
  await onlineWith(inviter, acceptor.name, acceptorRoles.length);
  await onlineWith(acceptor, inviter.name, inviterRoles.length);
}

/** Waits until `node` sees `peer` online (with `roles` peer roles). */
export function onlineWith(node: ServeNode, peer: string, roles?: number, timeoutMs = 30_000) {
  return node.api.waitFor(
    async () =>
      (await node.api.call('connections.list', {})).find(
        (c) => c.name === peer && c.online && (roles === undefined || c.peerRoles.length === roles),
      ),
    timeoutMs,
    `${node.name} to see ${peer} online`,
  );
}

/**
 * In `node`'s conversation with its scripted role, asks `target` (PEER/ROLE) `question`
 * and resolves with the answer reported back; the whole round trip crosses the wire twice.
 */
export async function askAcross(
  node: ServeNode,
  conversationId: number,
  target: string,
  question: string,
  timeoutMs = 60_000,
): Promise<string> {
  await node.api.call('conversations.send', { id: conversationId, text: `ask ${target}: ${question}` });
  const expected = `${target} says: answer from ${target.split('/')[1]}: ${question}`;
  return node.api.waitFor(
    async () => {
      const detail = await node.api.call('conversations.get', { id: conversationId });
      return detail.messages.find((m) => m.body === expected)?.body;
    },
    timeoutMs,
    `the answer to "${question}"`,
  );
}
