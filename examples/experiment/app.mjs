// The app under test: GET /weather asks the weather service (WEATHER_URL) with a 300 ms timeout,
// retries once, and when both attempts fail serves the last forecast it got (the fallback).
// FALLBACK=off switches the fallback off: the app then answers 502, as an app without one would.
// GET /health says what the last /weather answer was served from: "dependency" or "fallback".
// PORT (default 8000), WEATHER_URL (default http://127.0.0.1:34001, the experiment's proxy),
// WEATHER_TIMEOUT_MS (default 300).
import http from 'node:http';

const port = Number(process.env.PORT ?? 8000);
const weatherUrl = new URL('/forecast', process.env.WEATHER_URL ?? 'http://127.0.0.1:34001');
const fallbackOn = (process.env.FALLBACK ?? 'on') !== 'off';
const TIMEOUT_MS = Number(process.env.WEATHER_TIMEOUT_MS ?? 300);
const RETRIES = 1;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

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
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const server = http.createServer(async (req, res) => {
  if (req.url === '/health') return send(res, 200, { status: 'ok', serving, fallback: fallbackOn });
  if (req.url?.startsWith('/weather')) {
    try {
      const { forecast: data, source } = await forecast();
      if (source === 'dependency') lastForecast = data;
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
