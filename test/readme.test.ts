// Runs every example marked `<!-- example: name -->` in the README and docs/*.md exactly as
// written, against the built package (imports of 'spillway' resolve to this package by
// self-reference), and holds each to what it prints: the output shown in the docs under
// `<!-- output: name -->`, or else the expectation below — what the example's comments claim.
// The `redis` example needs the Redis on 127.0.0.1:6379 (skipped with a message outside CI).
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { codeBlocks, documentationFiles, root } from './helpers/markdown-blocks.js';
import { sharedRedisMissing } from './redis/helpers.js';

const blocks = documentationFiles().flatMap(codeBlocks);
const named = (kind: string, lang: string) =>
  new Map(
    blocks
      .filter((b) => b.lang === lang && b.note?.startsWith(`${kind}: `) === true)
      .map((b) => [b.note!.slice(kind.length + 2), b] as const),
  );
const examples = named('example', 'js');
const shownOutputs = named('output', 'text');

const redisMissing = await sharedRedisMissing();
if (redisMissing !== undefined)
  console.warn(`skipping the README's redis example: ${redisMissing}`);

const lines = (stdout: string) => stdout.trimEnd().split('\n');
const count = <T>(items: readonly T[], item: T) => items.filter((i) => i === item).length;

/** What each example not followed by its output in the docs must print. */
const expectations: Record<string, (stdout: string) => void> = {
  'token-bucket': (out) => expect(out).toBe('admitted, 14 left\n'),
  keyed: (out) => expect(out).toBe('remaining 14 of 15, full again in 7 ms\n'),
  concurrency: (out) => {
    // 10 run, 10 wait, 5 find the line full. A waiter held past its 50 ms on a busy machine
    // is a queue-timeout: still a 503, never a run past the limit.
    const answers = [...out.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    expect(answers).toHaveLength(25);
    expect(count(answers, '503 (queue-full)')).toBe(5);
    expect(count(answers, 'rows') + count(answers, '503 (queue-timeout)')).toBe(20);
    expect(count(answers, 'rows')).toBeGreaterThanOrEqual(10);
  },
  adaptive: (out) => {
    const m = /^limit 19 for 10 slots \(1\.5 × 10 \+ 4 by design\); (\d+) served\n$/.exec(out);
    expect(m, out).not.toBeNull();
    // A simulated minute at 10 slots × 30 ms serves at most 20,000; the limit keeps it near.
    expect(Number(m![1])).toBeGreaterThan(19_000);
    expect(Number(m![1])).toBeLessThanOrEqual(20_000);
  },
  deadline: (out) => expect(out).toBe('SPILLWAY_E_DEADLINE\n'),
  'retry-budget': (out) => expect(out).toBe('100 requests, 103 attempts\n'),
  redis: (out) => {
    const [first, second, third, ...rest] = lines(out);
    // Burst 2 in Redis; the local fallback would hold each replica to a third of it.
    expect([first, second]).toEqual(['admitted, 1 left (Redis)', 'admitted, 0 left (Redis)']);
    expect(third).toMatch(/^429 after (\d|[1-9]\d|100) ms \(Redis\)$/);
    expect(rest).toEqual([]);
  },
  'virtual-clock': (out) =>
    expect(out).toBe('{ ok: false, retryAfterMs: 100 }\n{ ok: true, remaining: 0 }\n'),
  'node-http': (out) => {
    // The quota (burst 25) refuses about 15 of 40; of the rest, 10 take the slots for 300 ms
    // and the line (10, at most 50 ms each) refuses the others. How many of each depends on
    // how fast the 40 arrive, which a busy machine slows.
    const statuses = out.trim().split(' ');
    expect(statuses).toHaveLength(40);
    expect(new Set(statuses)).toEqual(new Set(['200', '503', '429']));
  },
  express: (out) => {
    const m = /^200 \{ orders: \[ 'order-1' \], msLeft: (\d+) \}\n$/.exec(out);
    expect(m, out).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(1_000);
  },
  fastify: (out) => {
    const [first, second, third, ...rest] = lines(out);
    expect([first, second]).toEqual(Array(2).fill('200  {"criticality":"sheddable"}'));
    // The route's quota (burst 2) refuses the third, with Retry-After and a problem+json body.
    expect(third).toMatch(/^429 1 \{"type":"[^"]*#quota-exceeded",/);
    expect(rest).toEqual([]);
  },
  client: (out) => {
    const [first, second, ...rest] = lines(out);
    const left = (line: string | undefined, attempt: number) => {
      const m = new RegExp(`^callee: attempt ${attempt}, (\\d+) ms left$`).exec(line ?? '');
      expect(m, line).not.toBeNull();
      return Number(m![1]);
    };
    // The retry waited at least the 1 s the callee asked for, within the 5 s deadline.
    expect(left(first, 1)).toBeLessThanOrEqual(5_000);
    expect(left(first, 1) - left(second, 2)).toBeGreaterThanOrEqual(1_000);
    expect(rest).toEqual([
      '200 hello',
      'callee: attempt 1, undefined ms left', // no deadline given, none sent
      'SPILLWAY_E_OVERLOADED later 1',
    ]);
  },
};

const dir = join(root, 'test-artifacts', 'readme-examples');
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Forgets the redis example's bucket, so a run moments after another starts full. */
async function forgetRedisBucket(): Promise<void> {
  const redis = new Redis({ lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await redis.connect();
    await redis.del('spillway:{readme:tenant-42}:gcra');
  } finally {
    redis.disconnect();
  }
}

describe('README and docs examples run as written and print what they claim', () => {
  it('finds the examples, each with what it must print', () => {
    expect(examples.size).toBeGreaterThanOrEqual(13);
    const marked = blocks.filter((b) => b.note?.startsWith('example: ') === true);
    expect(marked.map((b) => `${b.file}:${b.line} ${b.lang}`)).toEqual(
      [...examples.values()].map((b) => `${b.file}:${b.line} js`), // js, and no name twice
    );
    for (const name of examples.keys()) {
      expect(shownOutputs.has(name) || name in expectations, `expected output of ${name}`).toBe(
        true,
      );
    }
    for (const name of [...Object.keys(expectations), ...shownOutputs.keys()]) {
      expect(examples.has(name), `an example named ${name}`).toBe(true);
    }
  });

  for (const [name, block] of examples) {
    // The redis example runs alone: its decisions have a 100 ms deadline, which a machine busy
    // with a dozen other examples at once can miss (the answer is then the local fallback's).
    const test = name === 'redis' ? it.skipIf(redisMissing !== undefined) : it.concurrent;
    test(`${name} (${block.file}:${block.line})`, async () => {
      if (name === 'redis') await forgetRedisBucket();
      const file = join(dir, `${name}.mjs`);
      writeFileSync(file, block.code);
      const { stdout } = await promisify(execFile)(process.execPath, [file], {
        cwd: root,
        timeout: 15_000,
      });
      const shown = shownOutputs.get(name);
      if (shown !== undefined) expect(stdout).toBe(shown.code);
      else expectations[name]!(stdout);
    });
  }
});
