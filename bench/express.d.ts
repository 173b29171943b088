// The little of express the A2A baseline uses (bench/wire-a2a.ts): @types/express is not
// among the dev dependencies, and the A2A SDK's express adapters only need an app to
// mount on.
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type RequestHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void;

  export interface Application extends RequestHandler {
    use(path: string, handler: RequestHandler): Application;
    use(handler: RequestHandler): Application;
  }

  export default function express(): Application;
}
