/**
 * The HTML report of a scenario: for `chain`, a table and bars of attempts at C per user
 * action per policy; for `metastable`, one heatmap per policy (load across, trigger duration
 * down), each cell green when goodput came back and red where it stayed down — the metastable
 * region. Plain HTML and CSS, nothing fetched, nothing to run.
 *
 * @module
 */
import type { ChainResult, ChainRow } from './scenarios/chain.js';
import type { MetastableResult } from './scenarios/metastable.js';

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
