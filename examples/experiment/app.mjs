// The app under test: GET /weather asks the weather service (WEATHER_URL) with a 300 ms timeout,
// retries once, and when both attempts fail serves the last forecast it got (the fallback).
// FALLBACK=off switches the fallback off: the app then answers 502, as an app without one would.
// GET /health says what the last /weather answer was served from: "dependency" or "fallback".
// GET /metrics serves its Prometheus metrics (prom-client): app_http_requests_total{route,code},
// app_http_request_duration_seconds{route} and app_weather_fallbacks_total.
// PORT (default 8000), WEATHER_URL (default http://127.0.0.1:34001, the experiment's proxy),
// WEATHER_TIMEOUT_MS (default 300).
import http from 'node:http';
import client from 'prom-client';

const port = Number(process.env.PORT ?? 8000);
const weatherUrl = new URL('/forecast', process.env.WEATHER_URL ?? 'http://127.0.0.1:34001');
const fallbackOn = (process.env.FALLBACK ?? 'on') !== 'off';
const TIMEOUT_MS = Number(process.env.WEATHER_TIMEOUT_MS ?? 300);
const RETRIES = 1;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

const registry = new client.Registry();
const requests = new client.Counter({
  name: 'app_http_requests_total',
  help: 'Requests the app answered, by route and status code',
  labelNames: ['route', 'code'],
  registers: [registry],
});
const duration = new client.Histogram({
  name: 'app_http_request_duration_seconds',
  help: 'Time to answer a request, by route',
  labelNames: ['route'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
});
const fallbacks = new client.Counter({
  name: 'app_weather_fallbacks_total',
  help: 'Answers served from the last forecast because the weather service failed',
  registers: [registry],
});
// Every series exists from the start, so a rate over them is 0 (not "no series") before the first error.
for (const code of ['200', '502']) requests.inc({ route: '/weather', code }, 0);

let lastForecast = { city: 'Lisbon', temperatureC: 20, sky: 'unknown' };
let serving = 'dependency';

function askWeather() {
  return new Promise((resolve, reject) => {
    const request = http.get(weatherUrl, { agent, timeout: TIMEOUT_MS }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => {
        if (response.statusCode !== 200) return reject(new Error(`weather answered ${response.statusCode}`));
        try {
          resolve(JSON.parse(body));
        } catch {
          reject(new Error('weather answered no JSON'));
        }
      });
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

async function forecast() {
  let lastError;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    try {
      return { forecast: await askWeather(), source: 'dependency' };
    } catch (error) {
      lastError = error;
      if (attempt < RETRIES) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  if (!fallbackOn) throw lastError;
  return { forecast: lastForecast, source: 'fallback' };
}

const send = (res, status, value) => {
  if (res.route) {
    requests.inc({ route: res.route, code: String(status) });
    duration.observe({ route: res.route }, (performance.now() - res.startedAt) / 1000);
  }
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const server = http.createServer(async (req, res) => {
  if (req.url === '/metrics') {
    const body = await registry.metrics();
    res.writeHead(200, { 'content-type': registry.contentType });
    return res.end(body);
  }
  if (req.url === '/health') return send(res, 200, { status: 'ok', serving, fallback: fallbackOn });
  if (req.url?.startsWith('/weather')) {
    res.route = '/weather';
    res.startedAt = performance.now();
    try {
      const { forecast: data, source } = await forecast();
      if (source === 'dependency') lastForecast = data;
      else fallbacks.inc();
      serving = source;
      return send(res, 200, { ...data, source });
    } catch (error) {
      serving = 'nothing';
      return send(res, 502, { error: `weather unavailable: ${error.message}` });
    }
  }
  send(res, 404, { error: 'not found' });
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`app on 127.0.0.1:${server.address().port} (fallback ${fallbackOn ? 'on' : 'off'})\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
