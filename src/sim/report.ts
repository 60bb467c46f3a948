/**
 * The HTML report of a scenario: for `chain`, a table and bars of attempts at C per user
 * action per policy; for `metastable`, one heatmap per policy (load across, trigger duration
 * down), each cell green when goodput came back and red where it stayed down — the metastable
 * region; for `spike`, G per server and shape beside the real demo's; for `corrective-push`,
 * one goodput timeline per push (an inline SVG line chart). Plain HTML, CSS and SVG, nothing
 * fetched, nothing to run.
 *
 * @module
 */
import type { ChainResult, ChainRow } from './scenarios/chain.js';
import type { CorrectivePushResult, PushTimeline } from './scenarios/corrective-push.js';
import type { MetastableResult } from './scenarios/metastable.js';
import type { SpikeResult } from './scenarios/spike.js';

const escape = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

const style = `body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 8px}p{max-width:70em}
.panels{display:flex;flex-wrap:wrap;gap:20px}.panel{border:1px solid #d5dbe1;border-radius:6px;padding:12px;flex:1 1 320px;max-width:460px}
table.grid{border-collapse:collapse;font-size:12px}table.grid td,table.grid th{padding:0;text-align:center}
table.grid td.cell{width:34px;height:26px;border:1px solid #fff;color:#fff;font-weight:600}
td.ok{background:#2f8f5b}td.stuck{background:#c0392b}th.axis{font-weight:normal;color:#4b5560;padding:0 6px}
.legend span{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 12px}
table.rows{border-collapse:collapse;margin:8px 0 20px}table.rows td,table.rows th{border-bottom:1px solid #e3e7eb;padding:4px 10px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}.bar{height:12px;background:#3b6fb6;display:inline-block}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escape(title)}</title><style>${style}</style></head><body>${body}</body></html>\n`;
}

function heatmap(r: MetastableResult, panel: MetastableResult['panels'][number]): string {
  const head = r.loads.map((l) => `<th class="axis">${l}</th>`).join('');
  const rows = r.triggerSeconds
    .map((t) => {
      const cells = r.loads
        .map((l) => {
          const c = panel.cells.find((x) => x.load === l && x.triggerSeconds === t)!;
          const tip = c.recovered
            ? `L ${l}, T ${t} s: recovered ${c.recoverySeconds} s after the trigger ended`
            : `L ${l}, T ${t} s: not recovered within 60 s (goodput ${c.finalGoodput} of capacity)`;
          return `<td class="cell ${c.recovered ? 'ok' : 'stuck'}" title="${escape(tip)}">${c.recovered ? '' : '✕'}</td>`;
        })
        .join('');
      return `<tr><th class="axis">${t} s</th>${cells}</tr>`;
    })
    .join('');
  const stuck = panel.cells.filter((c) => !c.recovered).length;
  return `<div class="panel"><h2>${escape(panel.label)}</h2>
<table class="grid" aria-label="${escape(panel.label)}"><tr><th class="axis">T ↓ / L →</th>${head}</tr>${rows}</table>
<p>${stuck} of ${panel.cells.length} cells metastable (✕).</p></div>`;
}

/** The HTML report of a `metastable` result. */
export function metastableReport(r: MetastableResult): string {
  const body = `<h1>spillway sim — metastable failure</h1>
<p>A service at load L (fraction of its capacity: 10 slots × 200 ms = 50 requests/s) loses 80 % of its capacity for T seconds. A cell is green when, within 60 s of the trigger's end, some 5 s window's goodput reached 0.95 × min(offered, capacity); red (✕) where goodput stayed down after the trigger was gone: the metastable region. Seed ${r.seed}.</p>
<p class="legend">Across: load L. Down: trigger duration T.<span style="background:#2f8f5b"></span>recovered<span style="background:#c0392b"></span>metastable</p>
<div class="panels">${r.panels.map((p) => heatmap(r, p)).join('')}</div>`;
  return page('spillway sim — metastable', body);
}

function rows(title: string, list: readonly ChainRow[]): string {
  if (list.length === 0) return '';
  const max = Math.max(...list.map((x) => x.attemptsAtC), 1);
  const tr = list
    .map(
      (x) =>
        `<tr><td>${escape(x.label)}</td><td class="num">${x.attemptsAtC.toFixed(2)}</td><td><span class="bar" style="width:${Math.max(1, Math.round((x.attemptsAtC / max) * 240))}px"></span></td><td class="num">${x.attemptsAtB.toFixed(2)}</td><td class="num">${x.attemptsAtA.toFixed(2)}</td><td class="num">${(x.succeededRatio * 100).toFixed(1)} %</td></tr>`,
    )
    .join('');
  return `<h2>${escape(title)}</h2><table class="rows"><tr><th>policy</th><th>attempts at C per user action</th><th></th><th>at B</th><th>at A</th><th>users served</th></tr>${tr}</table>`;
}

/** The HTML report of a `chain` result. */
export function chainReport(r: ChainResult): string {
  const body = `<h1>spillway sim — retry amplification in a chain</h1>
<p>Users → A → B → C. Attempts reaching C per user action, per retry policy. Seed ${r.seed}.</p>
${rows('C refusing everything (300 user actions)', r.refusing)}
${rows('C offered 1.5× its capacity (20 s of Poisson arrivals)', r.overloaded)}`;
  return page('spillway sim — chain', body);
}

/** The HTML report of a `spike` result. */
export function spikeReport(r: SpikeResult): string {
  const tr = r.rows
    .map(
      (x) =>
        `<tr><td>${escape(x.label)}</td><td class="num">${x.shape}×</td><td class="num">${x.g.toFixed(3)}</td><td><span class="bar" style="width:${Math.max(1, Math.round(Math.min(x.g, 1.2) * 200))}px"></span></td><td class="num">${x.actions}</td><td class="num">${x.wasted}</td></tr>`,
    )
    .join('');
  const body = `<h1>spillway sim — the demo's spike</h1>
<p>A server of 10 slots × 30 ms (${Math.round(r.capacityPerSec)} requests/s) offered 1.5× and 10× its capacity for 10 s by callers who wait 1 s. G is goodput (answers within the deadline) over capacity. The real <code>spillway demo</code> measured bounded G 0.988–0.997 at 1.5× and 0.979–1.000 at 10×, naive 0.57 at 1.5× (BENCHMARKS.md, "The demo"). Seed ${r.seed}.</p>
<table class="rows"><tr><th>server</th><th>offered</th><th>G</th><th></th><th>requests</th><th>served after the caller left</th></tr>${tr}</table>`;
  return page('spillway sim — spike', body);
}

function timeline(r: CorrectivePushResult, t: PushTimeline): string {
  const w = 420;
  const h = 140;
  const max = 1.2;
  const n = t.goodput.length;
  const x = (i: number): number => 30 + (i / n) * (w - 40);
  const y = (g: number): number => 10 + (1 - Math.min(g, max) / max) * (h - 30);
  const points = t.goodput.map((g, i) => `${x(i + 0.5).toFixed(1)},${y(g).toFixed(1)}`).join(' ');
  const marks = [
    [r.triggerAtSeconds, 'trigger', '#c0392b'],
    [r.triggerEndSeconds, 'trigger ends', '#c0392b'],
    [r.pushAtSeconds, 'push', '#2f8f5b'],
  ] as const;
  const lines = marks
    .map(
      ([s, label, color]) =>
        `<line x1="${x(s)}" x2="${x(s)}" y1="10" y2="${h - 20}" stroke="${color}" stroke-dasharray="3 3"/><text x="${x(s) + 2}" y="${label === 'push' ? 30 : label === 'trigger' ? 20 : 40}" font-size="10" fill="${color}">${label}</text>`,
    )
    .join('');
  const axis = `<line x1="30" x2="${w - 10}" y1="${y(0)}" y2="${y(0)}" stroke="#4b5560"/><text x="2" y="${y(1) + 4}" font-size="10">1.0</text><text x="2" y="${y(0) + 4}" font-size="10">0</text><line x1="30" x2="${w - 10}" y1="${y(1)}" y2="${y(1)}" stroke="#d5dbe1"/><text x="${w - 80}" y="${h - 4}" font-size="10">time (s), 0–${n}</text>`;
  const back =
    t.recoverySeconds === null
      ? 'goodput did not come back'
      : `goodput back ${t.recoverySeconds} s after the push`;
  return `<div class="panel"><h2>${escape(t.label)}</h2>
<svg width="${w}" height="${h}" role="img" aria-label="${escape(`${t.label}: goodput per second over capacity`)}">${axis}${lines}<polyline fill="none" stroke="#3b6fb6" stroke-width="1.5" points="${points}"/></svg>
<p>${back}.</p></div>`;
}

/** The HTML report of a `corrective-push` result. */
export function correctivePushReport(r: CorrectivePushResult): string {
  const body = `<h1>spillway sim — what ends a metastable failure</h1>
<p>The metastable scenario's service (10 slots × 200 ms = 50 requests/s, a line of 1,000) at load ${r.load} with naive retries (3 attempts, 1 s timeout each) loses 80 % of its capacity from ${r.triggerAtSeconds} s to ${r.triggerEndSeconds} s and stays down. At ${r.pushAtSeconds} s one corrective push is applied. Each chart is goodput per second (by the second users arrived in) over capacity. Seed ${r.seed}.</p>
<div class="panels">${r.timelines.map((t) => timeline(r, t)).join('')}</div>`;
  return page('spillway sim — corrective push', body);
}
