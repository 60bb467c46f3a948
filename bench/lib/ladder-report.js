// The overload ladder's HTML report (bench/ladder.js --report): per server, G(k), ok p99 over
// the server's unloaded p99, and refusal p99 across the rungs, as inline SVG line charts with
// the targets drawn in. Plain HTML and SVG: nothing fetched, nothing to run.

const colors = { naive: '#c0392b', bulkhead: '#7f8c8d', bounded: '#2e6fbf' };
const escape = (s) =>
  String(s).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );

/**
 * One chart: a line per server over the rungs (evenly spaced, labelled k ×), y from 0 to
 * `yMax` (values above it drawn at the top edge and labelled), a dashed line at `target`.
 */
function chart({ title, ks, servers, value, yMin = 0, yMax, target, targetLabel, format }) {
  const w = 460;
  const h = 220;
  const left = 44;
  const right = 12;
  const top = 14;
  const bottom = 34;
  const x = (i) => left + (ks.length === 1 ? 0.5 : i / (ks.length - 1)) * (w - left - right);
  const clamp = (v) => Math.max(yMin, Math.min(v, yMax));
  const y = (v) => top + (1 - (clamp(v) - yMin) / (yMax - yMin)) * (h - top - bottom);
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => {
      const v = yMin + f * (yMax - yMin);
      return `<line x1="${left}" x2="${w - right}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e7eb"/><text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${format(v)}</text>`;
    })
    .join('');
  const xAxis = ks
    .map(
      (k, i) =>
        `<text x="${x(i)}" y="${h - bottom + 16}" font-size="10" text-anchor="middle">${k} ×</text>`,
    )
    .join('');
  const goal =
    target === undefined
      ? ''
      : `<line x1="${left}" x2="${w - right}" y1="${y(target)}" y2="${y(target)}" stroke="#2f8f5b" stroke-dasharray="4 3"/><text x="${w - right}" y="${y(target) - 4}" font-size="10" text-anchor="end" fill="#2f8f5b">${escape(targetLabel)}</text>`;
  const lines = servers
    .map((s) => {
      const pts = ks
        .map((k, i) => [i, value(s, k)])
        .filter(([, v]) => v !== null && v !== undefined && Number.isFinite(v));
      if (pts.length === 0) return '';
      const path = pts.map(([i, v]) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
      const dots = pts
        .map(
          ([i, v]) =>
            `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colors[s]}"><title>${escape(`${s} at ${ks[i]} ×: ${format(v)}`)}</title></circle>` +
            (v > yMax || v < yMin
              ? `<text x="${x(i) - 4}" y="${v > yMax ? top + 12 : h - bottom - 4}" font-size="10" text-anchor="end" fill="${colors[s]}">${format(v)}</text>`
              : ''),
        )
        .join('');
      return `<polyline fill="none" stroke="${colors[s]}" stroke-width="2" points="${path}"/>${dots}`;
    })
    .join('');
  return `<div class="panel"><h2>${escape(title)}</h2><svg width="${w}" height="${h}" role="img" aria-label="${escape(title)}">${grid}${goal}${lines}${xAxis}<text x="${(left + w - right) / 2}" y="${h - 4}" font-size="10" text-anchor="middle">offered load, × capacity</text></svg></div>`;
}

/** The report of a ladder run: `{ machine, capacity, seconds, unloaded, rows }` as printed by --json. */
export function ladderReport(run) {
  const ks = [...new Set(run.rows.map((r) => r.k))].sort((a, b) => a - b);
  const servers = Object.keys(run.unloaded);
  const row = (s, k) => run.rows.find((r) => r.server === s && r.k === k);
  const legend = servers
    .map(
      (s) =>
        `<span style="background:${colors[s]}"></span>${escape(s)} (unloaded p50 ${run.unloaded[s].p50Ms?.toFixed(1)} ms, p99 ${run.unloaded[s].p99Ms?.toFixed(1)} ms)`,
    )
    .join('');
  const invalid = run.rows.filter((r) => !r.valid);
  const ms = (v) => `${Math.round(v)} ms`;
  const charts = [
    chart({
      title: 'G(k): goodput ÷ (min(k, 1) × capacity)',
      ks,
      servers,
      value: (s, k) => row(s, k)?.g,
      yMax: 1.2,
      target: 0.99,
      targetLabel: 'target 0.99',
      format: (v) => v.toFixed(2),
    }),
    chart({
      title: 'G(k), the guards closer',
      ks,
      servers: servers.filter((s) => s !== 'naive'),
      value: (s, k) => row(s, k)?.g,
      yMin: 0.9,
      yMax: 1.02,
      target: 0.99,
      targetLabel: 'target 0.99',
      format: (v) => v.toFixed(2),
    }),
    chart({
      title: 'ok p99 ÷ the server’s unloaded p99',
      ks,
      servers,
      value: (s, k) => row(s, k)?.okP99OverUnloaded,
      yMax: 6,
      target: 2,
      targetLabel: 'target ≤ 2 ×',
      format: (v) => `${v.toFixed(1)} ×`,
    }),
    chart({
      title: 'refusal p99',
      ks,
      servers: servers.filter((s) =>
        run.rows.some((r) => r.server === s && r.rejectedP99Ms !== null),
      ),
      value: (s, k) => row(s, k)?.rejectedP99Ms,
      yMax: 60,
      target: 5,
      targetLabel: 'target ≤ 5 ms',
      format: ms,
    }),
    chart({
      title: 'peak RSS above the idle server',
      ks,
      servers,
      value: (s, k) => row(s, k)?.rssAboveIdleMB,
      yMax: 128,
      target: 64,
      targetLabel: 'target ≤ 64 MB',
      format: (v) => `${Math.round(v)} MB`,
    }),
  ].join('');
  const notes =
    invalid.length === 0
      ? '<p>Every run kept its schedule (valid).</p>'
      : `<p>Not valid (the generator fell behind; read with care): ${invalid.map((r) => `${escape(r.server)} at ${r.k} ×`).join(', ')}.</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Spillway — the overload ladder</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d232a;background:#fff}h1{font-size:22px;margin:0 0 4px}
h2{font-size:15px;margin:0 0 8px}p{max-width:70em}.panels{display:flex;flex-wrap:wrap;gap:20px}
.panel{border:1px solid #d5dbe1;border-radius:6px;padding:12px}.legend span{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 14px}
</style></head><body><h1>Spillway — the overload ladder (S0, S1)</h1>
<p>${escape(run.machine)}. Capacity ${run.capacity.toFixed(1)} requests/s (10 connections × 30 ms); each rung ${run.seconds} s of open-loop load from 100 clients who give up after 1 s${run.connection === 'new' ? ', a new connection per request' : ''}, a fresh server per run, warmed up for ${run.warmupSeconds ?? 0.5} s at the rung's rate.</p>
<p class="legend">${legend}</p>${notes}<div class="panels">${charts}</div></body></html>\n`;
}
