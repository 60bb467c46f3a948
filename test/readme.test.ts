// Runs every README example marked `<!-- example: name -->` exactly as written, against the
// built package (imports of 'spillway' resolve to this package by self-reference).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/<!-- example: ([\w-]+) -->\s*```js\n([\s\S]*?)```/g)].map(
  (m) => ({
    name: m[1]!,
    code: m[2]!,
  }),
);
const dir = join(root, 'test-artifacts', 'readme-examples');
mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README examples run as written', () => {
  it('finds the examples', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
  });
  for (const { name, code } of examples) {
    it.concurrent(name, async () => {
      const file = join(dir, `${name}.mjs`);
      writeFileSync(file, code);
      const { stdout } = await promisify(execFile)(process.execPath, [file], {
        cwd: root,
        timeout: 15_000,
      });
      expect(stdout.length).toBeGreaterThan(0);
    });
  }
});
