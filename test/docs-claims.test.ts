// Claims in the README and docs that are facts about the code or the measurements, checked
// against them: which fields each error a client call rejects with carries, and that
// spillway/client exports each of those classes (docs/client.md); and that every cost ratio
// the README quotes is one BENCHMARKS.md states.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CircuitOpenError,
  DeadlineExceededError,
  DependencyOverloadedError,
  DependencyTimeoutError,
  DependencyUnreachableError,
  QueueFullError,
  QueueTimeoutError,
  RateLimitedError,
  RetryBudgetExhaustedError,
  ShedError,
  SpillwayArgumentError,
  ThrottledError,
  WaitLineFullError,
} from '../src/index.js';
import * as client from '../src/client/index.js';
import { root } from './helpers/markdown-blocks.js';

const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** One instance of each class the client's error table may name. */
const instances: Record<string, () => Error> = {
  DependencyOverloadedError: () => new DependencyOverloadedError('busy', { signal: 'later' }),
  RetryBudgetExhaustedError: () => new RetryBudgetExhaustedError({ attempts: 2 }),
  CircuitOpenError: () => new CircuitOpenError(),
  ThrottledError: () => new ThrottledError({ rejectProbability: 0.5 }),
  DependencyTimeoutError: () => new DependencyTimeoutError({ timeoutMs: 100 }),
  DependencyUnreachableError: () => new DependencyUnreachableError({ sent: false }),
  DeadlineExceededError: () => new DeadlineExceededError(),
  QueueFullError: () => new QueueFullError(),
  QueueTimeoutError: () => new QueueTimeoutError(),
  ShedError: () => new ShedError(),
  RateLimitedError: () => new RateLimitedError(1_000),
  WaitLineFullError: () => new WaitLineFullError({ maxWaiting: 1 }),
  SpillwayArgumentError: () => new SpillwayArgumentError('deadline', 'a number', 'soon'),
};

/** The rows of the table in `section` of docs/client.md, as cells. */
function tableRows(section: string): string[][] {
  const doc = read('docs/client.md');
  const start = doc.indexOf(`\n## ${section}\n`);
  expect(start, `docs/client.md has a section "${section}"`).toBeGreaterThan(-1);
  const body = doc.slice(start + 1).split('\n## ')[0]!;
  return body
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|\s*-/.test(line))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\|?\s*|\s*\|?$/g, '')));
}

const names = (cell: string) => [...cell.matchAll(/`(\w+)`/g)].map((m) => m[1]!);

describe('docs/client.md, Errors', () => {
  it('lists, for each class, exactly the fields its instances carry besides code', () => {
    const [header, ...rows] = tableRows('Errors');
    const classColumn = header!.indexOf('class');
    const fieldsColumn = header!.indexOf('fields besides `code`');
    expect(fieldsColumn, 'a column "fields besides `code`"').toBeGreaterThan(-1);
    expect(rows.length).toBeGreaterThanOrEqual(9);
    for (const row of rows) {
      const fields = names(row[fieldsColumn]!).sort();
      for (const name of names(row[classColumn]!)) {
        expect(Object.keys(instances), `a test instance of ${name}`).toContain(name);
        const own = Object.keys(instances[name]!()).filter((k) => k !== 'code');
        expect(own.sort(), name).toEqual(fields);
      }
    }
  });

  it('names only classes spillway/client exports, as the same objects as spillway', () => {
    const [header, ...rows] = tableRows('Errors');
    const classColumn = header!.indexOf('class');
    const named = rows.flatMap((row) => names(row[classColumn]!));
    expect(named.length).toBeGreaterThanOrEqual(9);
    const exported = client as Record<string, unknown>;
    const missing = named.filter((name) => exported[name] !== instances[name]?.().constructor);
    expect(missing, 'classes spillway/client does not re-export').toEqual([]);
  });
});

describe('README figures', () => {
  it('every cost ratio quoted (a–b ×) is one BENCHMARKS.md states', () => {
    const benchmarks = read('BENCHMARKS.md');
    const ratios = [...read('README.md').matchAll(/\d+(?:\.\d+)?–\d+(?:\.\d+)? ×/g)].map(
      (m) => m[0],
    );
    expect(ratios.length).toBeGreaterThanOrEqual(5);
    expect(ratios.filter((r) => !benchmarks.includes(r))).toEqual([]);
  });
});
