// The stand-in's default session and `protocol`: the permission handlers, header
// listeners and custom-scheme handlers the app installs are kept so that a test can
// call them as Chromium would. What it fakes: there is no network stack; a page loads
// only through a handler registered with protocol.handle, or from file://.
import { app } from './app';

type PermissionRequestHandler = (
  webContents: unknown,
  permission: string,
  callback: (granted: boolean) => void,
  details: Record<string, unknown>,
) => void;
type PermissionCheckHandler = (
  webContents: unknown,
  permission: string,
  requestingOrigin: string,
  details: Record<string, unknown>,
) => boolean;
export type ProtocolHandler = (request: Request) => Response | Promise<Response>;

export interface CustomScheme {
  scheme: string;
  privileges?: Record<string, boolean>;
}

export const privilegedSchemes: CustomScheme[] = [];
const handlers = new Map<string, ProtocolHandler>();
let privilegedOnce = false;

export const protocol = {
  registerSchemesAsPrivileged(schemes: CustomScheme[]): void {
    if (app.isReady()) throw new Error('protocol.registerSchemesAsPrivileged should be called before app is ready');
    if (privilegedOnce) throw new Error('protocol.registerSchemesAsPrivileged can be called only once');
    privilegedOnce = true;
    privilegedSchemes.push(...schemes.map((s) => ({ scheme: s.scheme, privileges: { ...s.privileges } })));
  },
  handle(scheme: string, handler: ProtocolHandler): void {
    if (!app.isReady()) throw new Error('protocol.handle can only be used after app is ready');
    if (handlers.has(scheme)) throw new Error(`Failed to register protocol: ${scheme}`);
    handlers.set(scheme, handler);
  },
  unhandle(scheme: string): void {
    handlers.delete(scheme);
  },
  isProtocolHandled(scheme: string): boolean {
    return handlers.has(scheme);
  },
};

export function protocolHandler(scheme: string): ProtocolHandler | undefined {
  return handlers.get(scheme);
}
export function handledSchemes(): string[] {
  return [...handlers.keys()];
}

class Session {
  permissionRequestHandler: PermissionRequestHandler | null = null;
  permissionCheckHandler: PermissionCheckHandler | null = null;
  readonly headerListeners: unknown[] = [];
  readonly protocol = protocol;
  readonly webRequest = {
    onHeadersReceived: (...args: unknown[]) => {
      this.headerListeners.push(args.at(-1));
    },
  };
  setPermissionRequestHandler(handler: PermissionRequestHandler | null): void {
    this.permissionRequestHandler = handler;
  }
  setPermissionCheckHandler(handler: PermissionCheckHandler | null): void {
    this.permissionCheckHandler = handler;
  }

  /** What Chromium would be told for a page's permission request; Electron grants all when no handler is set. */
  request(webContents: unknown, permission: string): Promise<boolean> {
    const handler = this.permissionRequestHandler;
    if (!handler) return Promise.resolve(true);
    return new Promise((resolve) => handler(webContents, permission, resolve, {}));
  }
  check(webContents: unknown, permission: string, origin: string): boolean {
    return this.permissionCheckHandler ? this.permissionCheckHandler(webContents, permission, origin, {}) : true;
  }
}

const defaultSession = new Session();

export const session = {
  get defaultSession(): Session {
    if (!app.isReady()) throw new Error('session.defaultSession can only be used after app is ready');
    return defaultSession;
  },
  fromPartition(): never {
    throw new Error('the electron stand-in has only the default session');
  },
};

export function standInSession(): Session {
  return defaultSession;
}
