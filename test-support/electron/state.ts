// What the stand-in records for a test to inspect, and the one way it reports to the
// test: messages on the Node IPC channel the test opened when it spawned this process.
import type { ControlPush } from './control-protocol';

export const records = {
  badgeCount: 0,
  notifications: [] as Array<{
    title: string;
    body: string;
    options: Record<string, unknown>;
    shown: boolean;
    clicked: boolean;
    closed: boolean;
  }>,
  errorBoxes: [] as Array<{ title: string; content: string }>,
  openedExternally: [] as string[],
  defaultProtocolClients: [] as string[],
};

export function push(message: ControlPush): void {
  if (process.send && process.connected) process.send(message);
}

/** Electron's preventable events: listeners call preventDefault(). */
export interface PreventableEvent {
  defaultPrevented: boolean;
  preventDefault(): void;
}

export function preventable<T extends object>(extra?: T): PreventableEvent & T {
  const event = {
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true;
    },
    ...extra,
  };
  return event as PreventableEvent & T;
}
