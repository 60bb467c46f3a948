import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { command } from './sim.js';

afterEach(() => vi.restoreAllMocks());

async function run(argv: readonly string[]): Promise<string> {
  let out = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  expect(await command.run(argv)).toBe(0);
  vi.restoreAllMocks();
  return out;
}

describe('spillway sim', () => {
  it.each(['spike', 'corrective-push'])(
    '--scenario %s --json: the same seed prints the same JSON',
    async (scenario) => {
      const a = await run(['--scenario', scenario, '--json', '--seed', '4']);
      expect(JSON.parse(a)).toMatchObject({ scenario, seed: 4 });
      expect(await run(['--scenario', scenario, '--json', '--seed', '4'])).toBe(a);
    },
    60_000,
  );

  it('writes the corrective-push report with one chart per push', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spillway-sim-'));
    try {
      const file = join(dir, 'push.html');
      await run(['--scenario', 'corrective-push', '--report', file]);
      const html = await readFile(file, 'utf8');
      expect(html.match(/<svg /g)).toHaveLength(4);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('prints the table with the seed and the wall time the run took', async () => {
    const out = await run(['--scenario', 'spike', '--seed', '3']);
    expect(out).toMatch(/bounded .* 10×\s+G \d\.\d{3}\n/);
    expect(out).toMatch(/\nseed 3, simulated in \d+\.\d s of wall time\n$/);
  }, 60_000);

  it('names the scenarios when given another', async () => {
    await expect(command.run(['--scenario', 'storm'])).rejects.toThrow(
      /chain, metastable, spike or corrective-push, got "storm"/,
    );
  });
});
