/**
 * The one bearer-token check of every HTTP door faultline serves (the MCP transport, the admin API,
 * and any later endpoint): one constant-time comparison, one answer when it fails.
 *
 *   if (!requireBearer(req, res, token)) return;   // answered 401 + WWW-Authenticate: Bearer
 *
 * A missing header and a wrong token get the same answer (401, the connection closed after it):
 * telling them apart only helps someone guessing.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A per-process key: both sides are HMACed with it, so the comparison's time says nothing of either's length or bytes.
 * */
const COMPARE_KEY = randomBytes(32);

/** Compares two secrets in constant time, whatever their lengths; an empty expected secret matches nothing. */
export function tokensMatch(given: string, expected: string): boolean {
  const a = createHmac('sha256', COMPARE_KEY).update(given).digest();
  const b = createHmac('sha256', COMPARE_KEY).update(expected).digest();
  return timingSafeEqual(a, b) && expected.length > 0;
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(authorization: string | string[] | undefined): string | undefined {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
  return match ? match[1]!.trim() : undefined;
}

/** The body sent with a 401 when the caller gives none: what every faultline HTTP door says. */
export const UNAUTHORIZED_MESSAGE = 'Unauthorized: send Authorization: Bearer <token>';

/**
 * True when the request carries the token. Otherwise answers 401 with `WWW-Authenticate: Bearer`
 * and `body` as JSON (default `{"error": UNAUTHORIZED_MESSAGE}`), and returns false: the caller
 * stops there.
 */
export function requireBearer(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  body: unknown = { error: UNAUTHORIZED_MESSAGE },
): boolean {
  if (tokensMatch(bearerToken(req.headers.authorization) ?? '', token)) return true;
  const text = JSON.stringify(body);
  res.writeHead(401, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'www-authenticate': 'Bearer realm="faultline"',
    // Nothing more is read from a peer without the token: the body it may still be sending is not
    // drained on a kept-alive connection.
    connection: 'close',
  });
  res.end(text);
  return false;
}
