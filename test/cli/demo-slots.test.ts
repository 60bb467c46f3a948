// `spillway demo --scenarios slots`: a tenant within its rate quota whose every request holds a
// slot for 600 ms, next to 100 polite clients. Where one tenant may take every slot (the bare
// bulkhead, Spillway without shares) it does, and the polite clients are refused; with
// tenantShare it holds its share and they are served. Judged as orderings with wide margins —
// the starvation without shares is the scenario's shape, not the machine's — and the holder's
// peak against its share exactly, since the guard enforces that whatever the load.
import { describe, expect, it } from 'vitest';
import { demoJson } from '../helpers/demo.js';

interface SlotsJson {
  runs: {
    server: string;
    valid: boolean;
    holderPeakSlots?: number;
    groups: { name: string; sent: number; ok: number; rejectedByStatus: Record<string, number> }[];
  }[];
  targets: { name: string; pass: boolean; detail: string }[];
}

describe('spillway demo --scenarios slots', () => {
  it(
    'a tenant holding slots long is held to its share, and the polite clients get through',
    { timeout: 120_000 },
    async () => {
      const out = await demoJson<SlotsJson>(
        ['--quick', '--json', '--no-report', '--scenarios', 'slots'],
        110_000,
      );
      const by = (server: string) => out.runs.find((r) => r.server === server);
      const group = (server: string, name: string) =>
        by(server)!.groups.find((g) => g.name === name)!;
      const politeShare = (server: string) => {
        const polite = group(server, 'polite');
        return polite.ok / polite.sent;
      };
      const without = ['bulkhead', 'bounded'].filter((s) => by(s) !== undefined);
      console.log(
        `slots: polite ok ${['shares', ...without].map((s) => `${s} ${(politeShare(s) * 100).toFixed(1)} %`).join(', ')}; ` +
          `holder peak slots ${['shares', ...without].map((s) => `${s} ${by(s)!.holderPeakSlots}`).join(', ')}`,
      );
      // With shares: the holder never holds more than 3 of the 10 slots, and is refused (503)
      // past them; the polite clients are served.
      expect(by('shares')!.holderPeakSlots).toBeLessThanOrEqual(3);
      expect(group('shares', 'holder').rejectedByStatus['503']).toBeGreaterThan(
        group('shares', 'holder').sent / 3,
      );
      // Without: the holder takes most of the slots and the polite clients lose theirs. (The
      // polite share with shares is judged against that, not against 99 %: on a machine at load
      // 14 it read 79.8 % — callers timing out on a stalled server — against 31.8–33.8 %.)
      expect(without).toContain('bounded');
      for (const server of without) {
        expect(by(server)!.holderPeakSlots).toBeGreaterThan(5);
        expect(politeShare('shares')).toBeGreaterThan(politeShare(server) + 0.3);
      }
      const target = out.targets.find((t) => t.name.startsWith('a tenant holding slots long'));
      expect(target?.detail).toMatch(/polite ok \d+\.\d %/);
    },
  );
});
