/**
 * The safety check on what a scenario may load: by default only loopback (we never load-test
 * someone else's server, or the internal network, by accident); what the server's allow-list
 * names besides. A host name is resolved, and every address it resolves to must qualify, so a
 * name cannot slip through; and the sockets that carry the load resolve through the policy's
 * targetLookup (load's `targets`), which applies the same rule at connect time, so a name that
 * resolves elsewhere later (DNS rebinding) cannot either.
 *
 * Link-local addresses (169.254/16, fe80::/10) and 169.254.169.254, the cloud metadata service,
 * are refused whatever the allow-list says.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { InputError } from '../kernel/errors.js';
import { addressRefusal, hostnameAllowed, type TargetRules } from '../target-policy.js';

// The policy itself lives in src/target-policy.ts, shared with the proxy's mappings.
export { isLocalAddress } from '../target-policy.js';

/**
 * Checks that `url` is an http(s) URL whose host the policy lets us dial (`rules`: the server's
 * allowance, or true for any); returns the parsed URL. `what` names the argument in errors.
 */
export async function checkLoadTarget(url: string, rules: TargetRules, what = 'url'): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(
      `${what}: "${url}" is not a URL; give an http:// or https:// URL such as http://127.0.0.1:8080/health`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InputError(`${what}: "${url}" uses ${parsed.protocol}; only http:// and https:// URLs can be loaded`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Refused before anything logs or sends the URL: credentials do not belong in it.
    throw new InputError(
      `${what}: credentials in the URL are not supported; send them as ` +
        `a header, e.g. headers: ["Authorization: Basic …"]`,
    );
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true })).map((entry) => entry.address);
    } catch (error) {
      // A name allowed as such (or any, with remote targets allowed) that does not resolve here
      // fails at connect instead.
      if (hostnameAllowed(rules, host)) return parsed;
      throw new InputError(
        `${what}: cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
  }
  for (const address of addresses) {
    const refusal = addressRefusal(address, rules, host);
    if (refusal)
      throw new InputError(`${what}: ${host === address ? '' : `${host} resolves to ${address}; `}${refusal}`);
  }
  return parsed;
}
