/**
 * The experiment runner's client of a control plane, against a real admin API on loopback: the plane's own expiry
 * outlives the step (so the runner reads the count before it goes), and a count it cannot read is said as such.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns';
import { after, before, describe, test } from 'node:test';
import { ControlClient } from '../src/experiment/adapters/proxy.js';
import { startControlPlane, startDependency, type ControlPlaneStack } from './fixtures/experiment/stack.js';

describe('ControlClient', () => {
  let dependency: Awaited<ReturnType<typeof startDependency>>;
  let plane: ControlPlaneStack;
  let client: ControlClient;

  before(async () => {
    dependency = await startDependency();
    plane = await startControlPlane(`127.0.0.1:${dependency.port}`, 'dep');
    client = new ControlClient(
      { name: 'p', url: plane.adminUrl, tokenEnv: 'FAULTLINE_ADMIN_TOKEN' },
      plane.token,
      lookup,
    );
  });

  after(async () => {
    await plane.close();
    await dependency.close();
  });

  test("a fault's expiry on the plane outlives its step, so a late switch-off still reads its count", async () => {
    const id = await client.inject('dep', { target: 'dep', type: 'error', statusCode: 503 }, 50);
    // The runner's switch-off 500 ms late, as a timer on a loaded machine can be.
    await new Promise((resolve) => setTimeout(resolve, 550));
    assert.deepEqual(await client.requestCount(id), { count: 0, unit: 'request' });
    await client.clear(id);
    assert.deepEqual(plane.registry.status(), []);
  });

  test('a fault the plane no longer lists has no count, and the reason says so', async () => {
    const id = await client.inject('dep', { type: 'error', statusCode: 503 }, 2000);
    plane.registry.clearAll();
    assert.match(String(await client.requestCount(id)), /no longer lists it .*unknown/);
    await client.clear(id);
  });

  test('a plane that does not answer gives no count, and the reason names the failure rather than an expiry', async () => {
    const gone = new ControlClient(
      { name: 'gone', url: 'http://127.0.0.1:9', tokenEnv: 'FAULTLINE_ADMIN_TOKEN' },
      plane.token,
      lookup,
    );
    const why = await gone.requestCount('dep-1-abcdef');
    assert.equal(typeof why, 'string');
    assert.match(String(why), /status could not be read/);
    assert.doesNotMatch(String(why), /no longer lists/);
  });
});
