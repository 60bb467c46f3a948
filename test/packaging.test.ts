// Tests the package as users get it: the packed tarball installed into an empty project, every
// subpath imported from ESM, required from CommonJS (require(esm), Node >= 20.19), and
// type-checked from TypeScript under both `nodenext` and `bundler` resolution.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, unknown>;
};
/** Subpaths that import an optional peer dependency, which users install to use them. */
const needsPeer: Readonly<Record<string, string>> = {
  'spillway/otel': '@opentelemetry/api',
  'spillway/grpc': '@grpc/grpc-js',
};
const subpaths = Object.keys(pkg.exports)
  .filter((k) => k !== './package.json')
  .map((k) => (k === '.' ? 'spillway' : `spillway/${k.slice(2)}`))
  .filter((s) => needsPeer[s] === undefined);
let project = '';

beforeAll(async () => {
  // The build under test, as `npm test` made it before the tests. Not rebuilt here: `npm pack`'s
  // prepack would empty dist/ while the tests beside this one run the CLI and import from it.
  if (!existsSync(join(root, 'dist', 'index.js'))) {
    throw new Error('dist/ is not built: run `npm run build` first (npm test does)');
  }
  project = mkdtempSync(join(tmpdir(), 'spillway-pack-'));
  const { stdout } = await run(
    'npm',
    ['pack', '--silent', '--ignore-scripts', '--pack-destination', project],
    { cwd: root },
  );
  const tarball = join(project, stdout.trim().split('\n').pop()!);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  // --offline: the package has no dependencies, so nothing but the tarball is installed.
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], {
    cwd: project,
  });
}, 120_000);
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the packed package', () => {
  it('ships dist without tests, and the docs', async () => {
    const { stdout } = await run(
      'tar',
      ['-tzf', (await run('ls', [project])).stdout.split('\n').find((f) => f.endsWith('.tgz'))!],
      {
        cwd: project,
      },
    );
    expect(stdout).toContain('package/dist/index.js');
    expect(stdout).toContain('package/dist/index.d.ts');
    expect(stdout).toContain('package/docs/errors.md');
    for (const file of ['LICENSE', 'uPlot.iife.min.js', 'uPlot.min.css']) {
      expect(stdout).toContain(`package/dist/load/report/vendor/uplot/${file}`);
    }
    expect(stdout).not.toMatch(/\.test\.(js|d\.ts)/);
    expect(stdout).not.toContain('package/src/');
    expect(stdout).toContain('package/LICENSE');
    // No source maps pointing at sources it does not ship, no types for the CLI's internals.
    expect(stdout).not.toMatch(/\.map$/m);
    expect(stdout).not.toMatch(/package\/dist\/cli\/.*\.d\.ts$/m);
  });

  it('runs nothing when installed (no install or prepare script)', () => {
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules', 'spillway', 'package.json'), 'utf8'),
    ) as { scripts?: Record<string, string> };
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
      expect(installed.scripts?.[hook]).toBeUndefined();
    }
  });

  it('has no dependencies, and writes its HTML report with uPlot and its licence inlined', async () => {
    const installed = JSON.parse(
      readFileSync(join(project, 'node_modules', 'spillway', 'package.json'), 'utf8'),
    ) as { dependencies?: unknown };
    expect(installed.dependencies).toBeUndefined();
    const modules = readdirSync(join(project, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(modules).toEqual(['spillway']);
    writeFileSync(
      join(project, 'report.mjs'),
      `import { renderReport } from 'spillway/load';
const html = await renderReport({ title: 'packed', runs: [] });
if (!html.includes('var uPlot=') || !html.includes('.uplot')) throw new Error('uPlot missing');
if (!html.includes('Copyright (c) 2022 Leon Sorokin')) throw new Error('licence missing');
console.log('ok');`,
    );
    expect((await run(process.execPath, ['report.mjs'], { cwd: project })).stdout.trim()).toBe(
      'ok',
    );
  });

  it('imports every subpath from ESM', async () => {
    const code = subpaths
      .map(
        (s, i) =>
          `import * as m${i} from '${s}'; if (Object.keys(m${i}).length === 0) throw new Error('${s} is empty');`,
      )
      .join('\n');
    // The caller-side primitives come through both doors, as the same objects.
    const same = `import * as core from 'spillway'; import * as client from 'spillway/client';
for (const n of ['retryBudget', 'backoff', 'retry', 'circuitBreaker', 'adaptiveThrottle', 'DependencyOverloadedError']) {
  if (typeof client[n] !== 'function' || client[n] !== core[n]) throw new Error('spillway/client ' + n);
}`;
    writeFileSync(join(project, 'esm.mjs'), `${code}\n${same}\nconsole.log('ok');`);
    expect((await run(process.execPath, ['esm.mjs'], { cwd: project })).stdout.trim()).toBe('ok');
  });

  it('requires every subpath from CommonJS', async () => {
    const code = subpaths
      .map((s) => `if (Object.keys(require('${s}')).length === 0) throw new Error('${s}');`)
      .join('\n');
    writeFileSync(
      join(project, 'cjs.cjs'),
      `${code}\nconst { tokenBucket } = require('spillway');\nconsole.log(tokenBucket({ ratePerSec: 1, burst: 1 }).tryTake().ok);`,
    );
    const { stdout } = await run(process.execPath, ['--no-warnings', 'cjs.cjs'], { cwd: project });
    expect(stdout.trim()).toBe('true');
  });

  for (const resolution of ['nodenext', 'bundler'] as const) {
    it(`type-checks from TypeScript with moduleResolution ${resolution}`, async () => {
      const dir = join(project, resolution);
      await run('mkdir', ['-p', dir]);
      writeFileSync(
        join(dir, 'use.ts'),
        [
          "import { concurrencyLimit, tokenBucket, type AcquireResult } from 'spillway';",
          "import { createVirtualClock } from 'spillway/testing';",
          'const clock = createVirtualClock();',
          'const r = tokenBucket({ ratePerSec: 1, burst: 1, clock }).tryTake();',
          'const n: number = r.ok ? r.remaining : r.retryAfterMs;',
          'const a: AcquireResult = concurrencyLimit({ limit: 1, clock }).tryAcquire();',
          'export { n, a };',
        ].join('\n'),
      );
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'es2022',
            lib: ['es2023', 'esnext.disposable', 'dom'],
            module: resolution === 'bundler' ? 'esnext' : 'nodenext',
            moduleResolution: resolution,
            types: [],
            skipLibCheck: false,
          },
          files: ['use.ts'],
        }),
      );
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
      const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
      await expect(run(process.execPath, [tsc, '-p', dir], { cwd: dir })).resolves.toBeDefined();
    });
  }

  it('spillway/grpc names its missing peer', async () => {
    writeFileSync(
      join(project, 'grpc.mjs'),
      "import('spillway/grpc').then(() => console.log('loaded'), (e) => console.log(String(e.message)));",
    );
    const { stdout } = await run(process.execPath, ['grpc.mjs'], { cwd: project });
    expect(stdout).toContain(needsPeer['spillway/grpc']);
  });

  // Last: it installs the peer, which the tests above check is not there.
  it('spillway/otel names its missing peer, and imports once the peer is installed', async () => {
    const probe = `import('spillway/otel').then(
  (m) => console.log(typeof m.otelMetrics),
  (e) => console.log(String(e.message)),
);`;
    writeFileSync(join(project, 'otel.mjs'), probe);
    const before = await run(process.execPath, ['otel.mjs'], { cwd: project });
    expect(before.stdout).toContain(needsPeer['spillway/otel']);
    // The peer as this repository has it (a dev dependency), packed and installed offline.
    const peer = join(root, 'node_modules', '@opentelemetry', 'api');
    const { stdout } = await run(
      'npm',
      ['pack', '--silent', '--ignore-scripts', '--pack-destination', project, peer],
      { cwd: project },
    );
    const tarball = join(project, stdout.trim().split('\n').pop()!);
    await run('npm', ['install', '--no-audit', '--no-fund', '--offline', tarball], {
      cwd: project,
    });
    expect((await run(process.execPath, ['otel.mjs'], { cwd: project })).stdout.trim()).toBe(
      'function',
    );
    writeFileSync(
      join(project, 'otel.cjs'),
      "console.log(typeof require('spillway/otel').otelTraceMarks);",
    );
    const cjs = await run(process.execPath, ['--no-warnings', 'otel.cjs'], { cwd: project });
    expect(cjs.stdout.trim()).toBe('function');
  }, 120_000);
});
