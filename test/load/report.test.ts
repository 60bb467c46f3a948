// The HTML report, opened in headless Chromium (Debian's package, driven by playwright-core;
// no browser is ever downloaded): the charts render with data, groups are charted, legends
// read without hovering, nothing is fetched from the network, and a screenshot is kept under
// test-artifacts/ for people to look at.
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReport, runLoad, writeReport, type LoadResult } from '../../src/load/index.js';
import type { ReportData } from '../../src/load/report/report-data.js';
import { startBoundedServerProcess } from './servers.js';

const chromium = '/usr/bin/chromium';

/** The little of a canvas the test reads (the project compiles without the DOM library). */
interface Canvas {
  readonly width: number;
  readonly height: number;
  getContext(kind: '2d'): {
    getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
  };
}
const artifacts = join(new URL('../..', import.meta.url).pathname, 'test-artifacts');
const runs: LoadResult[] = [];
/** Two groups against the shedding server: a greedy client and polite ones. */
let fairness: LoadResult;
const servers: { close(): void }[] = [];

/** The data a report embeds, as its page reads it. */
function embedded(html: string): ReportData {
  const json = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!;
  return JSON.parse(json) as ReportData;
}

beforeAll(async () => {
  // Capacity 500 req/s (10 slots × 20 ms): one server queues without bound, one sheds.
  const naive = await startBoundedServerProcess({ slots: 10, serviceMs: 20, queue: 1e9 });
  const bounded = await startBoundedServerProcess({ slots: 10, serviceMs: 20, queue: 10 });
  servers.push(naive, bounded);
  for (const [scenario, ratePerSec] of [
    ['0.6× capacity', 300],
    ['2× capacity', 1000],
  ] as const) {
    for (const [series, server] of [
      ['naive', naive],
      ['bounded', bounded],
    ] as const) {
      runs.push(
        await runLoad({
          url: server.url,
          ratePerSec,
          durationMs: 2500,
          deadlineMs: 500,
          scenario,
          series,
        }),
      );
    }
  }
  fairness = await runLoad({
    url: bounded.url,
    durationMs: 2500,
    scenario: 'greedy',
    series: 'bounded',
    groups: [
      { name: 'greedy', ratePerSec: 600, deadlineMs: 500 },
      { name: 'polite', ratePerSec: 100, deadlineMs: 500, clients: 10 },
    ],
  });
}, 60_000);

afterAll(() => {
  for (const server of servers) server.close();
});

describe('the HTML report', () => {
  it('is self-contained: the chart library inlined, no external resources', async () => {
    const html = await renderReport({ title: 'naive vs bounded', runs, capacityPerSec: 500 });
    expect(html).toContain('uPlot');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[^"'\s]+\.(js|css)/);
  });

  it('draws a short run per 250 ms step, and each group of a run at the same grain', async () => {
    // The steps a real run kept add up to its windows.
    for (const w of fairness.windows) {
      expect(w.steps.length).toBeGreaterThan(0);
      for (const key of ['offered', 'ok', 'good', 'rejected', 'timeout'] as const) {
        const steps = w.steps.reduce((n, s) => n + s.groups.reduce((m, g) => m + g[key], 0), 0);
        expect(steps).toBe(w[key]);
      }
    }
    const data = embedded(
      await renderReport({ runs: [runs[1]!, { ...fairness, leadGroup: 'polite' }] }),
    );
    const [single, groups] = data.runs;
    expect(single!.grainMs).toBe(250);
    // 2.5 s in quarters (~10 points; a stalled machine skips a few), not 3 windows.
    expect(single!.timeline.t.length).toBeGreaterThan(runs[1]!.windows.length + 2);
    expect(single!.groupTimelines).toEqual([]);
    expect(groups!.leadGroup).toBe('polite');
    expect(groups!.groupTimelines.map((g) => g.name)).toEqual(['polite', 'greedy']);
    const polite = groups!.groupTimelines[0]!;
    expect(polite.good).toHaveLength(groups!.timeline.t.length);
    // The polite clients offered ~100/s all along, and were served.
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(polite.offered.slice(0, 8))).toBeGreaterThan(50);
    expect(mean(polite.good.slice(0, 8))).toBeGreaterThan(20);
    expect(mean(groups!.groupTimelines[1]!.offered.slice(0, 8))).toBeGreaterThan(300);
  });

  it('keeps user text inert (labels are data, never markup)', async () => {
    const hostile = { ...runs[0]!, label: '</script><script>alert(1)</script>' };
    const html = await renderReport({ title: '<b>t</b>', runs: [hostile] });
    expect(html).not.toContain('</script><script>alert(1)');
    expect(html).toContain('<title>&lt;b&gt;t&lt;/b&gt;</title>');
  });

  it.skipIf(!existsSync(chromium))(
    'renders its charts with data in headless Chromium (screenshot in test-artifacts/)',
    async () => {
      const { chromium: browserType } = await import('playwright-core');
      mkdirSync(artifacts, { recursive: true });
      const file = join(artifacts, 'load-report.html');
      await writeReport(file, {
        title: 'Spillway load report — test run',
        subtitle:
          'A queue-everything server and a shedding server, both with capacity 500 req/s (10 slots × 20 ms)',
        notes: [
          'Generated by test/load/report.test.ts against local servers; timings depend on the machine.',
        ],
        runs: [
          ...runs.map((r, i) => ({
            ...r,
            notes: { server: r.series === 'naive' ? 'unbounded line' : '10-deep line' },
            // One run marked as not about load: it stays in the table, out of the goodput chart.
            goodputChart: i !== 0,
          })),
          { ...fairness, goodputChart: false, leadGroup: 'polite' },
        ],
        capacityPerSec: 500,
      });
      const profile = mkdtempSync(join(tmpdir(), 'spillway-chromium-'));
      // A fresh --user-data-dir: playwright takes it as the persistent context's directory.
      const browser = await browserType.launchPersistentContext(profile, {
        executablePath: chromium,
        headless: true,
        viewport: { width: 1360, height: 900 },
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        const requests: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        page.on('console', (m) => {
          if (m.type() === 'error') errors.push(m.text());
        });
        page.on('request', (r) => {
          if (!r.url().startsWith('file:')) requests.push(r.url());
        });
        await page.goto(`file://${file}`);
        await page.waitForSelector('body[data-rendered]');
        expect(errors).toEqual([]);
        expect(requests).toEqual([]);
        // 1 goodput chart + 2 charts per run, and a group chart for the run of two groups.
        const chartCount = 1 + (runs.length + 1) * 2 + 1;
        expect(await page.getAttribute('body', 'data-rendered')).toBe(String(chartCount));
        // Every chart canvas has drawn pixels that are not background.
        const inked = await page.$$eval('canvas', (canvases) =>
          canvases.map((c) => {
            const ctx = (c as unknown as Canvas).getContext('2d');
            const { data } = ctx.getImageData(
              0,
              0,
              (c as unknown as Canvas).width,
              (c as unknown as Canvas).height,
            );
            let colored = 0;
            for (let i = 0; i < data.length; i += 4) {
              const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
              if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) colored++;
            }
            return colored;
          }),
        );
        expect(inked.length).toBe(chartCount);
        // Grid lines are grey and do not count: coloured pixels are data (a line, or at least a point).
        for (const n of inked) expect(n).toBeGreaterThan(40);
        expect(inked.reduce((a, b) => a + b)).toBeGreaterThan(5000);
        const captions: string[] = await page.$$eval('section.card p.caption', (ps) =>
          ps.map((p) => (p as unknown as { textContent: string | null }).textContent ?? ''),
        );
        expect(captions.some((c) => c.includes('2 runs not about load'))).toBe(true);
        const rows = await page.$$eval(
          'table.summary tr.run, table.summary tr.group',
          (trs) => trs.length,
        );
        expect(rows).toBe(runs.length + 1 + 2);
        // Nothing hovered: every legend of a time chart holds the run's figures, none a dash.
        const legendValues: string[] = await page.$$eval('.u-legend.u-live .u-value', (vs) =>
          vs.map((v) => (v as unknown as { textContent: string | null }).textContent ?? ''),
        );
        expect(legendValues.length).toBeGreaterThan(runs.length * 8);
        for (const v of legendValues)
          expect(v).toMatch(/^(run mean|whole run|[\d.,]+[ \u00a0]?(\/s|ms|s))$/);
        // The run of two groups leads with its polite clients, and charts both groups.
        const fairCard = page.locator('article.card', { hasText: 'polite goodput' });
        expect(await fairCard.locator('.kpi-label').first().textContent()).toBe('polite goodput');
        const groupLegend = await fairCard.locator('.u-legend').first().innerText();
        expect(groupLegend).toMatch(/polite[\s\S]*greedy/);
        const shot = join(artifacts, 'load-report.png');
        await page.screenshot({ path: shot, fullPage: true });
        expect(statSync(shot).size).toBeGreaterThan(20_000);
      } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
