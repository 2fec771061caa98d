/**
 * The cloud tools through MCP (the real server, in memory) and the fis/export commands as a
 * person runs them (the built CLI in a child process; a test's other command lines through main()
 * in one child, helpers/cli-batch.ts): shapes, structuredContent = text, errors naming the
 * argument, exit code 2 with nothing on stdout.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYaml } from 'yaml';
import { connectInMemory, textOf } from './helpers/mcp.js';
import { cliPath } from './helpers/repo.js';
import { runCliBatch } from './helpers/cli-batch.js';
import type { CliOutcome } from './helpers/processes.js';

let mcp: Awaited<ReturnType<typeof connectInMemory>>;
before(async () => {
  mcp = await connectInMemory();
});
after(async () => {
  await mcp.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
}

const TARGET = JSON.stringify({
  roleArn: 'arn:aws:iam::123456789012:role/fis',
  stopConditionArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:p99',
  tags: { service: 'checkout' },
});

describe('MCP tools', () => {
  test('the three tools are listed read-only, in the cloud family', async () => {
    const { tools } = await mcp.client.listTools();
    for (const name of ['fault_recommend_fis_experiments', 'fault_create_fis_template', 'fault_export_scenario']) {
      const tool = tools.find((t) => t.name === name);
      assert.ok(tool, name);
      assert.equal(tool.annotations?.readOnlyHint, true);
      assert.equal(tool.annotations?.openWorldHint, false);
    }
  });

  test(
    "recommend → template: fis-recommender's finding shape in, its " +
      'output shape extended, fed straight into the template tool',
    async () => {
      const finding = JSON.stringify({
        id: 'inv-42',
        summary: 'Network latency between services causes request timeouts',
        type: 'incident',
        description: 'checkout → payments on ECS',
      });
      const result = await call('fault_recommend_fis_experiments', { finding, limit: 3 });
      assert.notEqual(result.isError, true, textOf(result));
      const text = JSON.parse(textOf(result)) as {
        finding_id: string;
        count: number;
        recommendations: Array<{ action: string; duration: string }>;
      };
      assert.deepEqual(text, result.structuredContent);
      assert.equal(text.finding_id, 'inv-42');
      assert.ok(text.count >= 1 && text.count <= 3 && text.count === text.recommendations.length, String(text.count));
      const best = text.recommendations[0]!;
      assert.equal(best.action, 'aws:ecs:task-network-latency');
      const template = await call('fault_create_fis_template', {
        recommendation: JSON.stringify(best),
        target_config: TARGET,
      });
      assert.notEqual(template.isError, true, textOf(template));
      const body = JSON.parse(textOf(template)) as {
        actions: Record<string, { targets: unknown; parameters: Record<string, string> }>;
      };
      assert.deepEqual(body, (template.structuredContent as { template: unknown }).template);
      assert.deepEqual(body.actions['task-network-latency']!.targets, { Tasks: 'ecs-task-1' });
      assert.equal(body.actions['task-network-latency']!.parameters.duration, best.duration);

      const cfn = await call('fault_create_fis_template', {
        recommendation: JSON.stringify(best),
        target_config: TARGET,
        format: 'cloudformation',
        yaml: true,
      });
      const document = parseYaml(textOf(cfn));
      assert.equal(document.Resources.FaultlineExperimentTemplate.Type, 'AWS::FIS::ExperimentTemplate');
      assert.deepEqual(
        document.Resources.FaultlineExperimentTemplate.Properties.Actions['task-network-latency'].Targets,
        { Tasks: 'ecs-task-1' },
      );
    },
  );

  test('bad arguments answer isError naming the field, with no structuredContent', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [
        'fault_create_fis_template',
        { recommendation: '{"action":"aws:ecs:task-network-latency","duration":"PT0M"}', target_config: TARGET },
        /^recommendation\.parameters\.duration/,
      ],
      [
        'fault_create_fis_template',
        { recommendation: 'not json', target_config: TARGET },
        /^recommendation: not JSON text/,
      ],
      [
        'fault_create_fis_template',
        {
          recommendation: '{"action":"aws:rds:reboot-db-instances"}',
          target_config: JSON.stringify({ ...JSON.parse(TARGET), resourceType: 'aws:ec2:instance' }),
        },
        /^target_config\.resourceType/,
      ],
      [
        'fault_create_fis_template',
        { recommendation: '{"action":"aws:ec2:reboot-instances"}', target_config: TARGET, yaml: true },
        /^yaml: applies to format cloudformation only/,
      ],
      ['fault_recommend_fis_experiments', { finding: '' }, /^finding:/],
      [
        'fault_export_scenario',
        { to: 'fis', fault: 'bandwidth', url: 'http://svc:8080/', duration: '5m' },
        /^fault: cannot export to fis/,
      ],
      ['fault_export_scenario', { to: 'k6', fault: 'latency', url: 'ftp://svc/' }, /^url:/],
      [
        'fault_export_scenario',
        { to: 'chaos-mesh', fault: 'latency', url: 'http://svc/', loss_rate: 0.1 },
        /^loss_rate: applies to packet_loss scenarios; a latency scenario takes latency, deviation, per_read_write_op, distribution$/,
      ],
      // Every declared argument is taken (per_read_write_op, jitter's) and refused only where it has no equivalent.
      [
        'fault_export_scenario',
        { to: 'chaos-mesh', fault: 'latency', url: 'http://svc/', per_read_write_op: true },
        /^per_read_write_op: cannot export to chaos-mesh/,
      ],
      [
        'fault_export_scenario',
        { to: 'k6', fault: 'latency', url: 'http://svc/', amplitude: 30 },
        /^amplitude: applies to jitter scenarios; a latency scenario takes latency/,
      ],
      ['fault_export_scenario', { to: 'k6', fault: 'jitter', url: 'http://svc/', amplitude: -1 }, /^amplitude:/],
      [
        'fault_export_scenario',
        {
          to: 'fis',
          fault: 'latency',
          url: 'http://svc/',
          duration: '5m',
          target_config: '{"roleArn":"x","stopConditonArn":"y"}',
        },
        /^target_config: unknown field "stopConditonArn"/,
      ],
    ];
    for (const [name, args, message] of cases) {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} ${JSON.stringify(args)}`);
      assert.match(textOf(result), message);
      assert.equal(result.structuredContent, undefined);
    }
  });

  test('export: jitter\'s declared arguments are taken, and "" is an argument\'s default', async () => {
    const result = await call('fault_export_scenario', {
      to: 'k6',
      fault: 'jitter',
      url: 'http://svc/',
      amplitude: 30,
      frequency: '',
      rtt: '',
    });
    assert.notEqual(result.isError, true, textOf(result));
    assert.match(textOf(result), /constant-arrival-rate/);
  });

  test('export: any host is accepted (nothing is loaded), the document is the text', async () => {
    const result = await call('fault_export_scenario', {
      to: 'chaos-mesh',
      fault: 'packet_loss',
      url: 'https://api.example.com/',
      loss_rate: 0.02,
      selector: ['app=api'],
    });
    assert.notEqual(result.isError, true, textOf(result));
    assert.equal((result.structuredContent as { document: string }).document, textOf(result));
    assert.equal(parseYaml(textOf(result)).spec.loss.loss, '2');
  });
});

/**
 * Command lines through main() in one child (helpers/cli-batch.ts; a process start costs ~0.4 s of
 * CPU), an outcome for each (runCliBatch checks there are as many).
 */
async function batch<const T extends readonly string[][]>(lines: T): Promise<{ [K in keyof T]: CliOutcome }> {
  return (await runCliBatch(lines.map((args) => ({ args: [...args] })))) as { [K in keyof T]: CliOutcome };
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('CLI', () => {
  test('fis recommend --json and the readable list', async () => {
    const json = await run([
      'fis',
      'recommend',
      '--finding',
      'Aurora failover caused database connection failures',
      '--json',
    ]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).recommendations[0].action, 'aws:rds:failover-db-cluster');
    const [list] = await batch([['fis', 'recommend', '--finding', 'Lambda invocation errors', '--limit', '2']]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^1\. aws:lambda:invocation-error/);
    assert.match(list.stdout, /rehearse locally: fault_run_http_error_impact_scenario/);
  });

  test(
    'fis template: CloudFormation JSON on stdout; a wrong field is ' + 'one line on stderr, exit 2, nothing on stdout',
    async () => {
      const [ok, bad] = await batch([
        [
          'fis',
          'template',
          '--recommendation',
          '{"action":"aws:ec2:stop-instances","parameters":{"startInstancesAfterDuration":"PT10M"}}',
          '--target',
          TARGET,
          '--format',
          'cloudformation',
        ],
        [
          'fis',
          'template',
          '--recommendation',
          '{"action":"aws:ec2:stop-instances"}',
          '--target',
          JSON.stringify({ ...JSON.parse(TARGET), selectionMode: 'COUNT(0)' }),
        ],
      ]);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(
        JSON.parse(ok.stdout).Resources.FaultlineExperimentTemplate.Properties.Actions['stop-instances'].Targets
          .Instances,
        'ec2-instance-1',
      );
      assert.equal(bad.code, 2);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, /^faultline: target_config\.selectionMode: COUNT\(0\)/);
    },
  );

  test('export --to k6 and a refused export', async () => {
    const k6 = await run([
      'export',
      '--to',
      'k6',
      'latency',
      '--url',
      'http://svc:8080/',
      '--num-clients',
      '5',
      '--rps',
      '4',
      '--slo',
      '99% @ 300ms',
    ]);
    assert.equal(k6.code, 0, k6.stderr);
    assert.match(k6.stdout, /"rate": 20/);
    assert.match(k6.stdout, /p\(99\)<=300/);
    assert.match(k6.stderr, /^note: /m);
    const [stray, badRate, refused] = await batch([
      ['export', '--to', 'k6', 'latency', '--url', 'http://svc:8080/', '--loss-rate', '0.1'],
      ['export', '--to', 'k6', 'latency', '--url', 'http://svc:8080/', '--rps', '0'],
      ['export', '--to', 'chaos-mesh', 'jitter', '--url', 'http://svc:8080/'],
    ]);
    assert.equal(stray.code, 2);
    assert.match(
      stray.stderr,
      /^faultline: --loss-rate applies to 'packet-loss' scenarios; 'latency' takes --latency, --deviation, --per-read-write-op, --distribution/,
    );
    // The scenario's own checks name the flags too, not the tool arguments behind them.
    assert.equal(badRate.code, 2);
    assert.match(badRate.stderr, /^faultline: --rps: /);
    assert.equal(refused.code, 2);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /cannot export to chaos-mesh/);
  });

  test('export: choices in any case, defaults that export, refusals naming the flags typed', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['--to', 'chaos-mesh', 'latency', '--deviation', '20', '--distribution', 'Normal'],
        /^faultline: --distribution: cannot export to chaos-mesh: a normal spread of 20 ms .*use --distribution uniform, or --deviation 0/,
      ],
      [
        ['--to', 'fis', 'latency', '--duration', '14h', '--fault-duration', '13h'],
        /^faultline: --fault-duration: cannot export to fis: duration PT13H is above PT12H/,
      ],
      [
        ['--to', 'fis', 'latency', '--target', '{"roleArn":"bad"}'],
        /^faultline: --target\.roleArn: "bad" is not an IAM role ARN/,
      ],
      [
        ['--to', 'chaos-mesh', 'bandwidth', '--bandwidth-scope', 'Connection'],
        /^faultline: --bandwidth-scope: cannot export to chaos-mesh: .*use --bandwidth-scope shared/,
      ],
      [['--to', 'k6', 'latency', '--rps', '0.333333333'], /^faultline: --rps: --num-clients × --rps = /],
      [
        ['--to', 'k6', 'latency', '--amplitude', '3'],
        /^faultline: --amplitude applies to 'jitter' scenarios; 'latency' takes /,
      ],
    ];
    const [fis, ok, ...refusals] = await batch([
      ['export', '--to', 'FIS', 'packet-loss', '--url', 'http://svc:8080/'],
      [
        'export',
        '--to',
        'Chaos-Mesh',
        'latency',
        '--url',
        'http://svc:8080/',
        '--deviation',
        '20',
        '--distribution',
        'UNIFORM',
        '--platform',
        'ECS',
      ],
      ...cases.map(([args]) => ['export', ...args.slice(0, 3), '--url', 'http://svc:8080/', ...args.slice(3)]),
    ]);
    assert.equal(fis.code, 0, fis.stderr);
    assert.equal(JSON.parse(fis.stdout).actions.fault.parameters.duration, 'PT10S');
    assert.match(fis.stderr, /^note: --duration: duration PT10S is below PT1M/m);
    assert.doesNotMatch(fis.stderr, /recommendation\[/);
    for (const [i, [args, expected]] of cases.entries()) {
      const bad = refusals[i]!;
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, expected);
    }
    assert.equal(ok.code, 0, ok.stderr);
  });
});
