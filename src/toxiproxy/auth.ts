/**
 * The Toxiproxy API's token check, when a token is configured: the admin API's bearer check
 * (src/proxy/control/admin.ts, constant time), behind this one function so the shared wire check
 * can take its place without touching the server.
 */
import type http from 'node:http';
import { tokensMatch } from '../proxy/control/admin.js';

/** Why the request is refused (401), or undefined when it may go on. */
export function tokenRefusal(req: http.IncomingMessage, token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  const header = req.headers['authorization'];
  if (!header) return 'missing Authorization: Bearer <token>';
  const given = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? '';
  return tokensMatch(given, token) ? undefined : 'wrong token';
}
