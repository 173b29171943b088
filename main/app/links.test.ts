// Invitation links held until the window's page listens, without Electron: ipc.ts (which
// needs it) is replaced by a stand-in that sends like the real one.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';

vi.mock('./ipc', () => ({
  sendToRenderer: (win: { webContents: { send(channel: string, value: unknown): void } }, event: unknown) =>
    win.webContents.send('parley:event', event),
}));

const { InvitationLinks, isInvitationLink } = await import('./links');

function fakeWindow() {
  const sent: unknown[] = [];
  const webContents = Object.assign(new EventEmitter(), {
    send: (channel: string, value: unknown) => sent.push([channel, value]),
  });
  const win = Object.assign(new EventEmitter(), { webContents, isDestroyed: () => false });
  return { win, sent };
}

describe('InvitationLinks', () => {
  it('holds links until the page listens, then sends each once', () => {
    const links = new InvitationLinks();
    const { win, sent } = fakeWindow();
    links.attach(win as never);
    expect(links.open('parley://invite/abc')).toBe(true);
    expect(sent).toEqual([]);
    links.rendererListening();
    expect(sent).toEqual([['parley:event', { type: 'invitation', link: 'parley://invite/abc' }]]);
    links.rendererListening();
    expect(sent).toHaveLength(1);
    // Listening: the next one goes at once.
    links.open('parley://invite/def');
    expect(sent).toHaveLength(2);
  });

  it('waits again while the page reloads, and for a new window', () => {
    const links = new InvitationLinks();
    const first = fakeWindow();
    links.attach(first.win as never);
    links.rendererListening();
    first.win.webContents.emit('did-start-loading');
    links.open('parley://invite/one');
    expect(first.sent).toEqual([]);
    first.win.emit('closed');
    const second = fakeWindow();
    links.attach(second.win as never);
    links.rendererListening();
    expect(second.sent).toEqual([['parley:event', { type: 'invitation', link: 'parley://invite/one' }]]);
  });

  it('ignores what is not an invitation link', () => {
    expect(isInvitationLink('parley://invite/abc')).toBe(true);
    expect(isInvitationLink('https://example.com')).toBe(false);
    expect(isInvitationLink('parley://has space')).toBe(false);
    expect(isInvitationLink(`parley://${'x'.repeat(5000)}`)).toBe(false);
    expect(new InvitationLinks().open('javascript:alert(1)')).toBe(false);
  });
});
