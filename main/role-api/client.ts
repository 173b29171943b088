// The role API client used by the `parley` CLI (and `parley mcp`).
import http from 'node:http';
import { RoleApiError, type RoleApiCommand, type RoleApiResponse } from './protocol';

export interface RoleApiTarget {
  socketPath: string;
  token: string;
}

export class ConnectError extends Error {}

export function callRoleApi<T = unknown>(target: RoleApiTarget, command: RoleApiCommand, body: object): Promise<T> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        socketPath: target.socketPath,
        path: `/v1/${command}`,
        method: 'POST',
        headers: {
          authorization: `Bearer ${target.token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          let response: RoleApiResponse<T>;
          try {
            response = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RoleApiResponse<T>;
          } catch {
            reject(
              new RoleApiError('internal', `Parley answered with something that is not JSON (HTTP ${res.statusCode})`),
            );
            return;
          }
          if (response.ok) resolve(response.result);
          else reject(new RoleApiError(response.error.code, response.error.message));
        });
      },
    );
    req.on('error', (error) =>
      reject(
        new ConnectError(
          `cannot reach Parley at ${target.socketPath}: ${(error as NodeJS.ErrnoException).code ?? error.message}`,
        ),
      ),
    );
    req.end(payload);
  });
}
