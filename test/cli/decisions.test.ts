// `spillway serve bounded --decisions` as the demo runs it: a child process from dist/, real
// requests over loopback, then /decisions — every admission decision counted once, in the
// window it was made, with the limit and the peaks; and answered while a burst fills every
// slot (the path is exempt from admission, and its requests are not counted).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { DecisionTraceSnapshot } from '../../src/cli/serve/decision-trace.js';
import { main, serveChildren } from './serve-child.js';

const serveChild = serveChildren();

async function serve(...args: string[]): Promise<string> {
  return `http://127.0.0.1:${await serveChild(...args)}`;
}

async function decisions(url: string): Promise<DecisionTraceSnapshot> {
  const res = await fetch(`${url}/decisions`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json');
  return (await res.json()) as DecisionTraceSnapshot;
}

/** The windows' decisions added up. */
function totals(s: DecisionTraceSnapshot): { admitted: number; refused: Record<string, number> } {
  const refused: Record<string, number> = {};
  let admitted = 0;
  for (const w of s.windows) {
    admitted += w.admitted;
    for (const [reason, n] of Object.entries(w.refused))
      refused[reason] = (refused[reason] ?? 0) + n;
  }
  return { admitted, refused };
}

/** /decisions once `decided` decisions are in closed windows (a window closes every 250 ms). */
async function once(url: string, decided: number): Promise<DecisionTraceSnapshot> {
  for (let tries = 0; ; tries++) {
    const s = await decisions(url);
    const t = totals(s);
    const n = t.admitted + Object.values(t.refused).reduce((a, b) => a + b, 0);
    if (n >= decided || tries >= 100) return s;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('spillway serve bounded --decisions', () => {
  it('counts every decision once, by reason, with the limit in force', async () => {
    // One token a second per client, a burst of 2: of 5 calls from client a, 2 pass, 3 are 429.
    const url = await serve('bounded', '--decisions', '--client-rate', '1', '--client-burst', '2');
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${url}/`, { headers: { 'x-client-id': 'a' } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    const s = await once(url, 5);
    expect(totals(s)).toEqual({ admitted: 2, refused: { quota: 3 } });
    expect(s.windowMs).toBe(250);
    expect(s.maxWindows).toBe(2_400);
    expect(s.dropped).toBe(0);
    for (const w of s.windows) {
      expect(w.limit).toBe(10);
      expect(w.peakInFlight).toBeLessThanOrEqual(1); // one call at a time
      expect(w.waited).toBe(0);
    }
    // Consecutive windows: each starts where the one before ended.
    for (let i = 1; i < s.windows.length; i++) {
      const before = s.windows[i - 1]!;
      expect(s.windows[i]!.startMs).toBeCloseTo(before.startMs + before.durationMs, 6);
    }
    // The scrapes themselves were never decided on.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(totals(await decisions(url))).toEqual({ admitted: 2, refused: { quota: 3 } });
  });

  it('answers while a burst fills every slot, and the counts match the answers', async () => {
    const url = await serve('bounded', '--decisions');
    // 60 calls at once from 60 clients: 10 slots and a line of 10 → some refused for capacity.
    const burst = Array.from({ length: 60 }, (_, i) =>
      fetch(`${url}/`, { headers: { 'x-client-id': `c${i}` } }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    await decisions(url); // exempt: answered whatever the load
    const statuses = await Promise.all(burst);
    const ok = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 503).length;
    expect(ok + refused).toBe(60);
    const s = await once(url, 60);
    const t = totals(s);
    expect(t.admitted).toBe(ok);
    expect(Object.values(t.refused).reduce((a, b) => a + b, 0)).toBe(refused);
    const peak = Math.max(...s.windows.map((w) => w.peakInFlight));
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(10);
    // Whoever waited in line left it, admitted or refused, and said for how long.
    for (const w of s.windows) {
      expect(w.peakQueued).toBeLessThanOrEqual(10);
      if (w.waited === 0) expect(w.waitSumMs).toBe(0);
      else expect(w.waitMaxMs).toBeGreaterThanOrEqual(w.waitSumMs / w.waited);
    }
  });

  it('is a usage error on a server that makes no decisions', () => {
    const r = spawnSync(process.execPath, [main, 'serve', 'naive', '--decisions'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--decisions applies to the bounded server on --framework node/);
  });
});
