/**
 * Toolset fis-recommender: fis-recommender-mcp's two tools, called as its users call them — the
 * payloads of its README verbatim — through the official SDK client, over stdio against the built
 * server (`faultline mcp --toolsets fis-recommender`) and in memory. Object and JSON-text forms give
 * the same results; the output has the seed's fields; errors name the argument.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { makeConfig } from '../src/config.js';
import { connectInMemory, connectStdio, textOf, type StdioSession } from './helpers/mcp.js';

/** recommend_fis_experiments' input, from fis-recommender-mcp's README ("Available Tools"). */
const README_FINDING = {
  finding: { id: 'finding-123', summary: 'Network latency caused timeouts', type: 'AVAILABILITY_ISSUE' },
};

/** create_fis_template's input, from the same README. */
const README_TEMPLATE = {
  recommendation: {
    action: 'aws:ec2:stop-instances',
    duration: 'PT3M',
    description: 'Test instance failure recovery',
  },
  target_config: {
    resourceType: 'aws:ec2:instance',
    selectionMode: 'COUNT(1)',
    tags: {
      Environment: 'staging',
      Team: 'platform',
    },
    roleArn: 'arn:aws:iam::123456789012:role/FISRole',
  },
};

interface SeedOutput {
  recommendations: Array<{
    action: string;
    duration: string | null;
    description: string;
    targets: string[];
    stopConditions: string[];
    parameters: Record<string, string>;
    parametersToSet: string[];
  }>;
  finding_id: string | null;
  count: number;
  notes: string[];
}

let stdio: StdioSession;
let memory: Awaited<ReturnType<typeof connectInMemory>>;
before(async () => {
  stdio = await connectStdio(['mcp', '--toolsets', 'fis-recommender']);
  memory = await connectInMemory(makeConfig({ toolsets: ['fis-recommender'] }));
});
after(async () => {
  await stdio.close();
  await memory.close();
});

async function call(
  name: string,
  args: Record<string, unknown>,
  over: 'stdio' | 'memory' = 'stdio',
): Promise<CallToolResult> {
  const client = over === 'stdio' ? stdio.client : memory.client;
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

describe('recommend_fis_experiments', () => {
  test(
    "the README's finding object: the seed's output shape, the " +
      "finding's id, one latency action per plausible platform",
    async () => {
      const result = await call('recommend_fis_experiments', README_FINDING);
      assert.notEqual(result.isError, true, textOf(result));
      const output = JSON.parse(textOf(result)) as SeedOutput;
      assert.deepEqual(output, result.structuredContent);
      assert.equal(output.finding_id, 'finding-123');
      assert.equal(output.count, output.recommendations.length);
      assert.ok(output.count >= 3);
      for (const r of output.recommendations) {
        assert.deepEqual(Object.keys(r).slice(0, 5), [
          'action',
          'duration',
          'description',
          'targets',
          'stopConditions',
        ]);
        assert.ok(
          r.targets.length === 1 &&
            r.stopConditions.length === 1 &&
            r.description.length > 0 &&
            r.description.length <= 500,
        );
      }
      assert.deepEqual(
        output.recommendations.slice(0, 3).map((r) => r.action),
        ['aws:ssm:send-command', 'aws:ecs:task-network-latency', 'aws:eks:pod-network-latency'],
      );
      assert.match(output.recommendations[0]!.parameters.documentArn!, /AWSFIS-Run-Network-Latency$/);
      assert.match(output.notes[0]!, /names no platform/);
    },
  );

  test('the same finding as JSON text, and over either transport, gives the same answer', async () => {
    const object = await call('recommend_fis_experiments', README_FINDING);
    const text = await call('recommend_fis_experiments', { finding: JSON.stringify(README_FINDING.finding) });
    const inMemory = await call('recommend_fis_experiments', README_FINDING, 'memory');
    assert.deepEqual(text.structuredContent, object.structuredContent);
    assert.deepEqual(inMemory.structuredContent, object.structuredContent);
  });

  test("the README's other findings: database, CPU and memory", async () => {
    const first = async (finding: Record<string, unknown>) =>
      (JSON.parse(textOf(await call('recommend_fis_experiments', { finding }))) as SeedOutput).recommendations[0]!;
    assert.equal(
      (
        await first({
          id: 'finding-db-001',
          summary: 'Database connection failures during peak load',
          type: 'DATABASE_ISSUE',
        })
      ).action,
      'aws:rds:reboot-db-instances',
    );
    const cpu = await first({ summary: 'CPU utilization reached 95% causing service degradation' });
    assert.match(cpu.parameters.documentArn!, /AWSFIS-Run-CPU-Stress$/);
    const memoryStress = await first({ id: 'mem-leak-001', summary: 'Memory leak caused OOM errors' });
    assert.match(memoryStress.parameters.documentArn!, /AWSFIS-Run-Memory-Stress$/);
    assert.equal(JSON.parse(memoryStress.parameters.documentParameters!).Percent, '80');
    // The Lambda client's payload (its README): a summary alone.
    const lambdaPayload = JSON.parse(
      textOf(await call('recommend_fis_experiments', { finding: { summary: 'network latency' } })),
    ) as SeedOutput;
    assert.ok(lambdaPayload.count > 0);
    assert.equal(lambdaPayload.finding_id, null);
  });

  test('bad findings are isError naming the argument', async () => {
    for (const [args, message] of [
      [{ finding: { id: 'x', summary: 42 } }, /finding\.summary/],
      [{ finding: { id: 'x', summary: 'y'.repeat(11_000) } }, /^finding: at most 10240 bytes/],
      [{ finding: { id: 'x' } }, /^finding: has no text to read/],
    ] as const) {
      const result = await call('recommend_fis_experiments', args as Record<string, unknown>);
      assert.equal(result.isError, true, JSON.stringify(args).slice(0, 80));
      assert.match(textOf(result), message);
    }
  });
});

describe('create_fis_template', () => {
  test(
    "the README's payload: a template with the action's own target " +
      "key, the seed's selection, a placeholder alarm named in the " +
      'warnings',
    async () => {
      const result = await call('create_fis_template', README_TEMPLATE);
      assert.notEqual(result.isError, true, textOf(result));
      const output = JSON.parse(textOf(result)) as { template: Record<string, any>; warnings: string[] };
      assert.deepEqual(output, result.structuredContent);
      const { template } = output;
      assert.equal(template.roleArn, 'arn:aws:iam::123456789012:role/FISRole');
      assert.deepEqual(template.actions['stop-instances'], {
        actionId: 'aws:ec2:stop-instances',
        description: 'Test instance failure recovery',
        parameters: { startInstancesAfterDuration: 'PT3M' },
        targets: { Instances: 'ec2-instance-1' },
      });
      assert.deepEqual(template.targets['ec2-instance-1'], {
        resourceType: 'aws:ec2:instance',
        selectionMode: 'COUNT(1)',
        resourceTags: { Environment: 'staging', Team: 'platform' },
      });
      assert.match(
        template.stopConditions[0].value,
        /^arn:aws:cloudwatch:us-east-1:123456789012:alarm:REPLACE_WITH_STOP_ALARM$/,
      );
      assert.ok(
        output.warnings.some((w) => /stopConditionArn was not given/.test(w)),
        output.warnings.join('\n'),
      );
    },
  );

  test("JSON text for both arguments, and server.py's name `target`, give the same template", async () => {
    const object = await call('create_fis_template', README_TEMPLATE);
    const text = await call('create_fis_template', {
      recommendation: JSON.stringify(README_TEMPLATE.recommendation),
      target_config: JSON.stringify(README_TEMPLATE.target_config),
    });
    const target = await call('create_fis_template', {
      recommendation: README_TEMPLATE.recommendation,
      target: README_TEMPLATE.target_config,
    });
    assert.deepEqual(text.structuredContent, object.structuredContent);
    assert.deepEqual(target.structuredContent, object.structuredContent);
  });

  test(
    'a recommendation from recommend_fis_experiments, as returned, ' +
      'builds a template with its SSM document and no warning',
    async () => {
      const recommended = JSON.parse(
        textOf(
          await call('recommend_fis_experiments', {
            finding: { id: 'm', summary: 'Memory leak caused OOM errors on the EC2 fleet' },
          }),
        ),
      ) as SeedOutput;
      const best = recommended.recommendations[0]!;
      assert.equal(best.action, 'aws:ssm:send-command');
      const result = await call('create_fis_template', {
        recommendation: best,
        target_config: {
          ...README_TEMPLATE.target_config,
          stopConditionArn: 'arn:aws:cloudwatch:us-east-1:123456789012:alarm:errors',
        },
      });
      assert.notEqual(result.isError, true, textOf(result));
      const { template, warnings } = JSON.parse(textOf(result)) as {
        template: Record<string, any>;
        warnings: string[];
      };
      const action = template.actions['send-command'];
      assert.match(action.parameters.documentArn, /AWSFIS-Run-Memory-Stress$/);
      assert.equal(action.parameters.duration, best.duration);
      assert.equal(JSON.parse(action.parameters.documentParameters).DurationSeconds, '300');
      assert.deepEqual(warnings, []);
    },
  );

  test(
    'refusals name the field: an action FIS lacks, a missing target, ' +
      "a resource type not the action's, both target names",
    async () => {
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [
          { ...README_TEMPLATE, recommendation: { action: 'aws:ec2:explode', duration: 'PT3M' } },
          /^recommendation\.action: "aws:ec2:explode" is not an FIS action/,
        ],
        [{ recommendation: README_TEMPLATE.recommendation }, /^target_config: required/],
        [
          { ...README_TEMPLATE, recommendation: { action: 'aws:rds:reboot-db-instances' } },
          /^target_config\.resourceType: aws:rds:reboot-db-instances targets aws:rds:db, not aws:ec2:instance/,
        ],
        [{ ...README_TEMPLATE, target: README_TEMPLATE.target_config }, /^target: give target_config or target/],
        [
          { ...README_TEMPLATE, target_config: { ...README_TEMPLATE.target_config, tags: {} } },
          /^target_config\.tags: must have at least one tag/,
        ],
      ];
      for (const [args, message] of cases) {
        const result = await call('create_fis_template', args);
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.match(textOf(result), message);
        assert.equal(result.structuredContent, undefined);
      }
    },
  );
});
