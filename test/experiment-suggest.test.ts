/**
 * suggest produces a file that validates (issue 39 item 6): an app calling got, undici, axios,
 * superagent, @cypress/request and node-fetch has each found with its address variable and the
 * port of `process.env.PORT || 8090`; an app that calls nothing gets the load-only experiment, said
 * so, and both files pass the reader `validate` uses.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FileAccess } from '../src/access.js';
import { makeConfig } from '../src/config.js';
import { experimentFrom } from '../src/experiment/load-file.js';
import type { SafetyPolicy } from '../src/experiment/adapters/policy.js';
import { suggestFromSources } from '../src/experiment/suggest/index.js';
import { runCliProcess } from './helpers/processes.js';

const limits = { ...makeConfig().scenario, allowRemoteTargets: true };
const policy: SafetyPolicy = {
  allowRemoteTargets: true,
  allowNonLoopbackBind: false,
  allowProduction: false,
};

function app(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-suggest-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('suggest', () => {
  test('finds got, undici, axios, superagent, @cypress/request and node-fetch; the file validates', async () => {
    const dir = app({
      'server.js': [
        "const express = require('express');",
        "const got = require('got');",
        "const { request } = require('undici');",
        "const axios = require('axios');",
        "const superagent = require('superagent');",
        "const cypressRequest = require('@cypress/request');",
        "const fetch = require('node-fetch');",
        'const app = express();',
        "app.get('/', async (req, res) => {",
        "  const a = await got(process.env.PRICES_URL + '/prices');",
        "  const b = await undici.request(process.env.STOCK_URL || 'http://stock.internal:8081');",
        "  const c = await axios.get(process.env.USERS_URL ?? 'http://users.internal:8082');",
        "  const d = await superagent.get(process.env.TAX_URL || 'http://tax.internal:8083');",
        "  request(process.env.LEGACY_URL || 'http://legacy.internal:8084', () => {});",
        "  const e = await fetch(process.env.QUOTES_URL || 'http://quotes.internal:8085');",
        "  res.send('ok');",
        '});',
        'app.listen(process.env.PORT || 8090);',
        '',
      ].join('\n'),
    });
    try {
      const suggestion = await suggestFromSources(new FileAccess([]), { sourceDir: dir });
      const clients = suggestion.dependencies.map((d) => `${d.client}:${d.env}`).sort();
      for (const expected of [
        'got:PRICES_URL',
        'undici:STOCK_URL',
        'axios:USERS_URL',
        'superagent:TAX_URL',
        'request:LEGACY_URL',
        'fetch:QUOTES_URL',
      ])
        assert.ok(clients.includes(expected), `${expected} in ${clients.join(', ')}`);
      assert.match(suggestion.experiment, /url: http:\/\/127\.0\.0\.1:8090\//, 'the port of process.env.PORT || 8090');
      const experiment = await experimentFrom({ experiment: suggestion.experiment }, { limits, policy });
      assert.equal(experiment.steps.length, suggestion.dependencies.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no dependency: said so, and a load-only experiment that validates', async () => {
    const dir = app({
      'main.py': [
        'import os',
        'from fastapi import FastAPI',
        'import uvicorn',
        'app = FastAPI()',
        '@app.get("/")',
        'def root():',
        '    return {"ok": True}',
        'uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", 8091)))',
        '',
      ].join('\n'),
    });
    try {
      const suggestion = await suggestFromSources(new FileAccess([]), { sourceDir: dir });
      assert.deepEqual(suggestion.dependencies, []);
      assert.ok(
        suggestion.notes.some((note) => /No outbound dependency was found.*load-only/.test(note)),
        suggestion.notes.join('\n'),
      );
      assert.doesNotMatch(suggestion.experiment, /method: \[\]|recover_within/);
      const experiment = await experimentFrom({ experiment: suggestion.experiment }, { limits, policy });
      assert.equal(experiment.steps.length, 0);
      assert.equal(experiment.load!.url, 'http://127.0.0.1:8091/');
      assert.deepEqual(
        experiment.expectations.map((e) => [e.kind, e.window.label]),
        [
          ['slo', 'run'],
          ['slo', 'run'],
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The app's own port, as load.url gives it. */
async function loadPort(files: Record<string, string>): Promise<string | undefined> {
  const dir = app(files);
  try {
    const suggestion = await suggestFromSources(new FileAccess([]), { sourceDir: dir });
    return /url: http:\/\/127\.0\.0\.1:(\d+)\//.exec(suggestion.experiment)?.[1];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("suggest reads what the trial's shop wrote (a keyword DSN, a port through a name)", () => {
  const shop = [
    'import os, psycopg2',
    'from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler',
    'from pymemcache.client.base import Client',
    'PORT = int(os.environ.get("PORT", "8100"))',
    'MEMCACHED_ADDR = os.environ.get("MEMCACHED_ADDR", "127.0.0.1:11211")',
    'DATABASE_URL = os.environ.get("DATABASE_URL", "host=db.internal port=5433 dbname=shop user=shop password=pw")',
    'def get():',
    '    conn = psycopg2.connect(DATABASE_URL, async_=1)',
    'class H(BaseHTTPRequestHandler):',
    '    pass',
    'srv = ThreadingHTTPServer(("127.0.0.1", PORT), H)',
    'srv.serve_forever()',
    '',
  ].join('\n');

  test('through the CLI: the DSN keeps dbname, user and password; the port is 8100; ports below 32768', async () => {
    const dir = app({ 'app.py': shop });
    try {
      const outcome = await runCliProcess(['experiment', 'suggest', dir], {});
      assert.equal(outcome.code, 0, outcome.stderr);
      assert.match(
        outcome.stdout,
        /#   DATABASE_URL=host=127\.0\.0\.1 port=(\d+) dbname=shop user=shop password=pw\n/,
        'only host and port change',
      );
      assert.match(outcome.stdout, /url: http:\/\/127\.0\.0\.1:8100\//);
      assert.match(outcome.stdout, /- (\d+)=tcp:\/\/db\.internal:5433#database/);
      assert.doesNotMatch(outcome.stderr, /port was not found/);
      for (const [, port] of outcome.stdout.matchAll(/^ {2}- (\d+)=/gm))
        assert.ok(Number(port) < 32768, `proxy port ${port} is below the ephemeral range`);
      const file = join(dir, 'suggested.yaml');
      writeFileSync(file, outcome.stdout);
      const validate = await runCliProcess(['experiment', 'validate', file], {});
      assert.equal(validate.code, 0, validate.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("URL DSNs keep user, password, database and options; Go's @tcp() and ;-separated strings too", async () => {
    const dir = app({
      'app.py': [
        'import os, psycopg2, pymysql',
        'A_DSN = os.environ.get("ORDERS_DSN", "postgresql://app:s3cret@orders.internal:6432/orders?sslmode=disable")',
        'B_DSN = os.environ.get("MYSQL_LEGACY_DSN", "Server=legacy.internal;Port=3307;Database=old;User Id=u")',
        'psycopg2.connect(A_DSN)',
        '',
      ].join('\n'),
      'main.go': [
        'package main',
        'import ("database/sql"; "os")',
        'func main() {',
        '  dsn := os.Getenv("MYSQL_DSN")',
        '  sql.Open("mysql", dsn)',
        '}',
        '',
      ].join('\n'),
    });
    try {
      const suggestion = await suggestFromSources(new FileAccess([]), { sourceDir: dir });
      const port = (name: string): string => {
        const line = /(\d+)=/.exec(
          suggestion.experiment.split('\n').find((l) => l.includes(`#${name}`) && /^ {2}- /.test(l)) ?? '',
        );
        return line?.[1] ?? '?';
      };
      assert.equal(
        suggestion.env.ORDERS_DSN,
        `postgresql://app:s3cret@127.0.0.1:${port('orders')}/orders?sslmode=disable`,
      );
      assert.equal(
        suggestion.env.MYSQL_LEGACY_DSN,
        `Server=127.0.0.1;Port=${port('mysql-legacy')};Database=old;User Id=u`,
      );
      assert.match(suggestion.experiment, /=tcp:\/\/orders\.internal:6432#orders/);
      assert.match(suggestion.experiment, /=tcp:\/\/legacy\.internal:3307#mysql-legacy/);
      // No default in the code to copy: the value carries host and port only, and a note says so.
      assert.ok(
        suggestion.notes.some((note) => /MYSQL_DSN=.*keep your own value's database, user, password/.test(note)),
        suggestion.notes.join('\n'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the app's port from the common forms of each language", async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['4101', { 'a.py': 'import os\nPORT = int(os.getenv("PORT", 4101))\napp.run(host="0.0.0.0", port=PORT)\n' }],
      [
        '4102',
        {
          'a.py':
            'import os\nfrom wsgiref.simple_server import make_server\n' +
            'port = int(os.environ.get("APP_PORT") or "4102")\nmake_server("", port, app).serve_forever()\n',
        },
      ],
      ['4103', { 'a.js': 'const port = Number(process.env.PORT ?? 4103);\napp.listen(port);\n' }],
      ['4104', { 'a.js': 'const port = process.env.PORT || 4104;\nserver.listen(port, () => {});\n' }],
      ['4105', { 'a.ts': 'const PORT = parseInt(process.env.PORT ?? "4105", 10);\napp.listen(PORT);\n' }],
      [
        '4106',
        {
          'main.go':
            'package main\nimport ("net/http"; "os")\nfunc main() {\n  port := os.Getenv("PORT")\n' +
            '  if port == "" {\n    port = "4106"\n  }\n  http.ListenAndServe(":"+port, nil)\n}\n',
        },
      ],
      [
        '4107',
        {
          'main.go':
            'package main\nimport "net/http"\nfunc main() {\n  port := getEnv("PORT", "4107")\n' +
            '  http.ListenAndServe(":"+port, nil)\n}\n',
        },
      ],
    ];
    for (const [expected, files] of cases) assert.equal(await loadPort(files), expected, Object.values(files)[0]);
  });
});
