/**
 * The Toxiproxy API's token check, when a token is configured: the one bearer check every faultline
 * HTTP door makes (src/jsonrpc/bearer.ts, constant time), answered in Toxiproxy's error shape by
 * the server.
 */
import type http from 'node:http';
import { bearerToken, tokensMatch } from '../jsonrpc/bearer.js';

/** Why the request is refused (401), or undefined when it may go on. */
export function tokenRefusal(req: http.IncomingMessage, token: string | undefined): string | undefined {
  if (token === undefined) return undefined;
  return tokensMatch(bearerToken(req.headers.authorization) ?? '', token)
    ? undefined
    : 'Unauthorized: send Authorization: Bearer <token>';
}
