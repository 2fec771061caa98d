// The dependency: a weather service answering GET /forecast with JSON, fast.
// PORT (default 7001).
import http from 'node:http';

const port = Number(process.env.PORT ?? 7001);
const server = http.createServer((req, res) => {
  if (req.url?.startsWith('/forecast')) {
    const body = JSON.stringify({ city: 'Lisbon', temperatureC: 21, sky: 'clear', at: new Date().toISOString() });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`weather service on 127.0.0.1:${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
