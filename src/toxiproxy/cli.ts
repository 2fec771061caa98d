/**
 * toxiproxy-cli's commands against a Toxiproxy API (faultline's or Toxiproxy's own): list,
 * inspect, create, toggle, delete, toxic add|update|remove. Output is toxiproxy-cli's when it
 * does not write to a terminal (what scripts read), without colours. Each function returns the
 * text to print; a refused call throws a CliError with toxiproxy-cli's wording.
 */
import http from 'node:http';

export class CliError extends Error {}

export interface CliClient {
  request(method: string, path: string, body?: unknown): Promise<unknown>;
}

interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: ToxicJson[];
}

interface ToxicJson {
  name: string;
  type: string;
  stream: string;
  toxicity: number;
  attributes: Record<string, unknown>;
}

/** A client of the API at `base` (http://HOST:PORT, or HOST:PORT). */
export function cliClient(base: string, timeoutMs = 10_000): CliClient {
  const url = new URL(base.includes('://') ? base : `http://${base}`);
  if (url.protocol !== 'http:') throw new CliError(`--host ${base}: the Toxiproxy API speaks http://`);
  return {
    request(method, path, body) {
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const request = http.request(
          new URL(path, url),
          {
            method,
            timeout: timeoutMs,
            headers: {
              'user-agent': 'toxiproxy-cli',
              ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
            },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('error', reject);
            response.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              let value: unknown;
              try {
                value = text.trim() === '' ? undefined : JSON.parse(text);
              } catch {
                value = text;
              }
              const status = response.statusCode ?? 0;
              if (status >= 200 && status < 300) return resolve(value);
              const message = (value as { error?: unknown } | undefined)?.error;
              reject(new CliError(`HTTP ${status}: ${typeof message === 'string' ? message : text.trim()}`));
            });
          },
        );
        request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
        request.on('error', (error: NodeJS.ErrnoException) =>
          reject(new CliError(`cannot reach ${url.origin}: ${error.code ?? error.message}`)),
        );
        request.end(payload);
      });
    },
  };
}

const named = (what: string, name: string | undefined): string => {
  if (!name) throw new CliError(`Proxy name is ${what}.`);
  return encodeURIComponent(name);
};

export async function list(client: CliClient): Promise<string> {
  const proxies = (await client.request('GET', '/proxies')) as Record<string, ProxyJson>;
  return Object.keys(proxies)
    .sort()
    .map((name) => {
      const proxy = proxies[name]!;
      return `${proxy.name}\t${proxy.listen}\t${proxy.upstream}\t${proxy.enabled ? 'enabled' : 'disabled'}\t${proxy.toxics.length}\n`;
    })
    .join('');
}

export async function inspect(client: CliClient, name: string | undefined): Promise<string> {
  const path = `/proxies/${named('required as the first argument', name)}`;
  const proxy = (await fetchProxy(client, path, name!)) as ProxyJson;
  return proxy.toxics.map(toxicLine).join('');
}

function toxicLine(toxic: ToxicJson): string {
  const attributes = Object.keys(toxic.attributes)
    .sort()
    .map((key) => `\t${key}=${String(toxic.attributes[key])}`)
    .join('');
  return `${toxic.name}\ttype=${toxic.type}\tstream=${toxic.stream}\ttoxicity=${toxic.toxicity.toFixed(2)}\tattributes=[${attributes}\t]\n`;
}

async function fetchProxy(client: CliClient, path: string, name: string): Promise<unknown> {
  try {
    return await client.request('GET', path);
  } catch (error) {
    throw new CliError(`Failed to retrieve proxy ${name}: ${(error as Error).message}`);
  }
}

export async function create(
  client: CliClient,
  name: string | undefined,
  listen: string | undefined,
  upstream: string | undefined,
): Promise<string> {
  named('required as the first argument', name);
  if (!listen) throw new CliError("Required argument 'listen' was empty.");
  if (!upstream) throw new CliError("Required argument 'upstream' was empty.");
  try {
    await client.request('POST', '/proxies', { name, listen, upstream, enabled: true });
  } catch (error) {
    throw new CliError(`Failed to create proxy: ${(error as Error).message}`);
  }
  return `Created new proxy ${name}\n`;
}

export async function toggle(client: CliClient, name: string | undefined): Promise<string> {
  const path = `/proxies/${named('required as the first argument', name)}`;
  const proxy = (await fetchProxy(client, path, name!)) as ProxyJson;
  try {
    await client.request('POST', path, { enabled: !proxy.enabled });
  } catch (error) {
    throw new CliError(`Failed to toggle proxy ${name}: ${(error as Error).message}`);
  }
  return `Proxy ${name} is now ${proxy.enabled ? 'disabled' : 'enabled'}\n`;
}

export async function remove(client: CliClient, name: string | undefined): Promise<string> {
  const path = `/proxies/${named('required as the first argument', name)}`;
  await fetchProxy(client, path, name!);
  try {
    await client.request('DELETE', path);
  } catch (error) {
    throw new CliError(`Failed to delete proxy: ${(error as Error).message}`);
  }
  return `Deleted proxy ${name}\n`;
}

export interface ToxicOptions {
  toxicName?: string | undefined;
  type?: string | undefined;
  toxicity?: string | undefined;
  attribute?: string[] | undefined;
  upstream?: boolean | undefined;
  downstream?: boolean | undefined;
}

/** `key=value` pairs; a value that reads as a number is one (toxiproxy-cli's parseAttributes). */
export function parseAttributes(pairs: readonly string[] = []): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const value = pair.slice(at + 1);
    attributes[pair.slice(0, at)] = value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  return attributes;
}

function toxicity(text: string | undefined, fallback: number | undefined): number | undefined {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || value > 1)
    throw new CliError('toxicity should be a float between 0 and 1.');
  return value;
}

export async function addToxic(client: CliClient, proxy: string | undefined, options: ToxicOptions): Promise<string> {
  const path = `/proxies/${named('missing', proxy)}/toxics`;
  if (!options.type) throw new CliError("Required argument 'type' was empty.");
  if (options.upstream && options.downstream)
    throw new CliError('Only one should be specified: upstream or downstream.');
  const body = {
    name: options.toxicName ?? '',
    type: options.type,
    stream: options.upstream ? 'upstream' : 'downstream',
    toxicity: toxicity(options.toxicity, 1),
    attributes: parseAttributes(options.attribute),
  };
  let toxic: ToxicJson;
  try {
    toxic = (await client.request('POST', path, body)) as ToxicJson;
  } catch (error) {
    throw new CliError(`Failed to add toxic: ${(error as Error).message}`);
  }
  return `Added ${toxic.stream} ${toxic.type} toxic '${toxic.name}' on proxy '${proxy}'\n`;
}

export async function updateToxic(
  client: CliClient,
  proxy: string | undefined,
  options: ToxicOptions,
): Promise<string> {
  const path = `/proxies/${named('missing', proxy)}/toxics/${encodeURIComponent(options.toxicName ?? '')}`;
  const value = toxicity(options.toxicity, undefined);
  const body = { attributes: parseAttributes(options.attribute), ...(value !== undefined ? { toxicity: value } : {}) };
  let toxic: ToxicJson;
  try {
    toxic = (await client.request('POST', path, body)) as ToxicJson;
  } catch (error) {
    throw new CliError(`Failed to update toxic: ${(error as Error).message}`);
  }
  return `Updated toxic '${toxic.name}' on proxy '${proxy}'\n`;
}

export async function removeToxic(
  client: CliClient,
  proxy: string | undefined,
  options: ToxicOptions,
): Promise<string> {
  const path = `/proxies/${named('missing', proxy)}/toxics/${encodeURIComponent(options.toxicName ?? '')}`;
  try {
    await client.request('DELETE', path);
  } catch (error) {
    throw new CliError(`Failed to remove toxic: ${(error as Error).message}`);
  }
  return `Removed toxic '${options.toxicName ?? ''}' on proxy '${proxy}'\n`;
}
