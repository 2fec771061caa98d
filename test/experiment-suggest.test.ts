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
