/**
 * The safety check on what a scenario may load: by default only loopback and private addresses
 * (we never load-test someone else's server by accident). A host name is resolved, and every
 * address it resolves to must qualify, so a public name cannot slip through; and the sockets that
 * carry the load resolve through the policy's targetLookup (load's `localOnly`), which applies the
 * same rule at connect time, so a name that resolves elsewhere later (DNS rebinding) cannot either.
 *
 * Link-local addresses (169.254/16, fe80::/10) are not private networks, and 169.254.169.254 is
 * the cloud metadata service: they are refused too.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ToolInputError } from '../errors.js';
import { addressRefusal } from '../target-policy.js';

// The policy itself lives in src/target-policy.ts, shared with the proxy's mappings.
export { isLocalAddress } from '../target-policy.js';

/**
 * Checks that `url` is an http(s) URL whose host is loopback or private (unless remote targets
 * are allowed); returns the parsed URL. `what` names the argument in errors.
 */
export async function checkLoadTarget(url: string, allowRemote: boolean, what = 'url'): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ToolInputError(`${what}: "${url}" is not a URL; give an http:// or https:// URL such as http://127.0.0.1:8080/health`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ToolInputError(`${what}: "${url}" uses ${parsed.protocol}; only http:// and https:// URLs can be loaded`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Refused before anything logs or sends the URL: credentials do not belong in it.
    throw new ToolInputError(`${what}: credentials in the URL are not supported; send them as a header, e.g. headers: ["Authorization: Basic …"]`);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true })).map((entry) => entry.address);
    } catch (error) {
      // With remote targets allowed, a name that does not resolve here fails at connect instead.
      if (allowRemote) return parsed;
      throw new ToolInputError(`${what}: cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  for (const address of addresses) {
    const refusal = addressRefusal(address, allowRemote);
    if (refusal) throw new ToolInputError(`${what}: ${host === address ? '' : `${host} resolves to ${address}; `}${refusal}`);
  }
  return parsed;
}
