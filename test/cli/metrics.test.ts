// `spillway serve bounded --metrics` as an operator runs it: a child process from dist/, real
// requests over loopback, then a scrape of /metrics — every admission decision counted once
// by route and result, the exposition valid for Prometheus (`promtool check metrics`, from
// Debian's prometheus package; .ci/run installs it) — and scraped again while a burst is in
// flight. The scrapes themselves are exempt from admission.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { main, serveChildren } from './serve-child.js';

const serve = serveChildren();

/** The value of the sample `name{…labels}` (labels matched as given, others ignored). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return undefined;
}

function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error !== undefined) {
    throw new Error("promtool is not installed: install Debian's prometheus package", {
      cause: r.error,
    });
  }
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('spillway serve bounded --metrics', () => {
  it('counts every decision on /metrics, in an exposition promtool accepts', async () => {
    // One token a second per client, a burst of 2: of 5 calls from client a, 2 pass, 3 are 429.
    const port = await serve('bounded', '--metrics', '--client-rate', '1', '--client-burst', '2');
    const url = `http://127.0.0.1:${port}`;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${url}/`, { headers: { 'x-client-id': 'a' } });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 429, 429, 429]);

    const scrape = await fetch(`${url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await scrape.text();
    const route = { spillway_route: 'default' };
    expect(
      sample(text, 'spillway_admission_requests_total', { ...route, spillway_result: 'admitted' }),
    ).toBe(2);
    expect(
      sample(text, 'spillway_admission_requests_total', { ...route, spillway_result: 'quota' }),
    ).toBe(3);
    expect(
      sample(text, 'spillway_quota_decisions_total', {
        ...route,
        spillway_result: 'quota',
        spillway_store_degraded: 'false',
      }),
    ).toBe(3);
    expect(sample(text, 'spillway_limit', route)).toBe(10);
    expect(sample(text, 'spillway_admission_lease_duration_count', route)).toBe(2);
    // The client key is personal and unbounded: never a label.
    expect(text).not.toMatch(/x-client-id|"a"/);
    const check = promtoolCheck(text);
    expect(check.output).toBe('');
    expect(check.status).toBe(0);
  });

  it('answers a scrape while a burst fills every slot, and the counts add up', async () => {
    const port = await serve('bounded', '--metrics');
    const url = `http://127.0.0.1:${port}`;
    // 60 calls at once from 60 clients: 10 slots and a line of 10 → some refused for capacity.
    const burst = Array.from({ length: 60 }, (_, i) =>
      fetch(`${url}/`, { headers: { 'x-client-id': `c${i}` } }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    const during = await fetch(`${url}/metrics`);
    expect(during.status).toBe(200); // exempt: never refused, whatever the load
    expect(promtoolCheck(await during.text()).status).toBe(0);
    const statuses = await Promise.all(burst);
    const ok = statuses.filter((s) => s === 200).length;
    expect(ok + statuses.filter((s) => s === 503).length).toBe(60);

    const text = await (await fetch(`${url}/metrics`)).text();
    const route = { spillway_route: 'default' };
    const admitted = sample(text, 'spillway_admission_requests_total', {
      ...route,
      spillway_result: 'admitted',
    });
    const decisions = text
      .split('\n')
      .filter((line) => line.startsWith('spillway_admission_requests_total{'))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(admitted).toBe(ok);
    expect(decisions).toBe(60); // each call decided once; the scrapes not at all
    expect(sample(text, 'spillway_admission_active_requests', route)).toBe(0);
    expect(sample(text, 'spillway_admission_queued_requests', route)).toBe(0);
    expect(promtoolCheck(text).status).toBe(0);
  });

  it('is a usage error on a server that makes no decisions', () => {
    const r = spawnSync(process.execPath, [main, 'serve', 'naive', '--metrics'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--metrics applies to the bounded server on --framework node/);
  });
});
