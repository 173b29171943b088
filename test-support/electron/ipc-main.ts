// The stand-in's ipcMain: the same registry Electron keeps (one handler per invoke
// channel, listeners per send channel), which the test calls as the page's preload would.
import { EventEmitter } from 'node:events';

type InvokeHandler = (event: unknown, ...args: unknown[]) => unknown;

class IpcMain extends EventEmitter {
  private readonly handlers = new Map<string, InvokeHandler>();

  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  }
  handleOnce(channel: string, handler: InvokeHandler): void {
    this.handle(channel, (event, ...args) => {
      this.removeHandler(channel);
      return handler(event, ...args);
    });
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }

  /** What ipcRenderer.invoke would get: the handler's value, or Electron's error when nobody handles the channel. */
  async invoke(channel: string, event: unknown, args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler)
      throw new Error(`Error invoking remote method '${channel}': Error: No handler registered for '${channel}'`);
    return await handler(event, ...args);
  }
  channels(): string[] {
    return [...this.handlers.keys()];
  }
}

export const ipcMain = new IpcMain();
