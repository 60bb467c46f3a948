#!/usr/bin/env node
// Draws docs/adaptive-limit-step.svg: each adaptive limit in front of the same simulated
// database while its service time steps from 30 ms to 300 ms and back. Everything runs in
// virtual time on the real primitives (concurrencyLimit + the algorithm + createSlotServer), so
// the chart is exact and the same on every machine.
// Usage: npm run build && node scripts/adaptive-chart.js [--out path]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { aimdLimit, concurrencyLimit, gradientLimit, vegasLimit } from '../dist/index.js';
import { createSlotServer, createVirtualClock } from '../dist/testing/index.js';

const { values } = parseArgs({
  options: { out: { type: 'string', default: 'docs/adaptive-limit-step.svg' } },
});

// The database: 40 connections; each query 30 ms ± 30 % (uniform), 300 ms ± 30 % from 30 s
// to 60 s. It lines up at
// most 40 more queries and refuses beyond that (a drop). Offered 2,000 queries/s open-loop:
// 1.5× its capacity before the step, 15× during it.
const slots = 40;
const serverQueue = 40;
const offeredPerSec = 2_000;
const serviceAt = (t) => (t >= 30_000 && t < 60_000 ? 300 : 30);
const endMs = 100_000;
const stepMs = 250; // one point of the chart
const windows = { minWindowMs: 100, maxWindowMs: 100 };

const algorithms = [
  {
    name: 'gradientLimit',
    color: '#1f77b4',
    make: (clock) => gradientLimit({ ...windows, clock }),
  },
  {
    name: 'vegasLimit',
    color: '#2ca02c',
    make: (clock) => vegasLimit({ ...windows, clock, random: seeded(7) }),
  },
  {
    name: 'aimdLimit (timeoutMs 150)',
    color: '#d62728',
    make: (clock) => aimdLimit({ ...windows, clock, timeoutMs: 150 }),
  },
];

function seeded(seed) {
  let s = seed;
  return () => (s = (s * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x80000000;
}

function simulate(make) {
  const clock = createVirtualClock();
  const random = seeded(42);
  const limit = make(clock);
  const limiter = concurrencyLimit({ limit, clock });
  const db = createSlotServer({
    slots,
    serviceTimeMs: () => serviceAt(clock.now()) * (0.7 + 0.6 * random()),
    maxQueue: serverQueue,
    clock,
  });
  const arrive = () => {
    const r = limiter.tryAcquire();
    if (r.ok) db.submit((ok) => r.permit.release(ok ? 'ok' : 'dropped'));
    clock.setTimer(1_000 / offeredPerSec, arrive);
  };
  arrive();
  const points = [];
  for (let t = 0; t <= endMs; t += stepMs) {
    points.push([t, limit.current]);
    clock.advanceSync(stepMs);
  }
  return points;
}

// Layout.
const width = 900;
const height = 460;
const m = { left: 60, right: 240, top: 40, bottom: 50 };
const plotW = width - m.left - m.right;
const plotH = height - m.top - m.bottom;
const yMax = 100;
const x = (t) => m.left + (t / endMs) * plotW;
const y = (v) => m.top + plotH - (Math.min(v, yMax) / yMax) * plotH;
const fmt = (n) => (Math.round(n * 10) / 10).toString();

const series = algorithms.map((a) => ({ ...a, points: simulate(a.make) }));
const parts = [];
parts.push(
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
  `<rect width="${width}" height="${height}" fill="white"/>`,
  `<text x="${m.left}" y="22" font-size="14" font-weight="bold">Adaptive limits tracking a 10× latency step (virtual time, 100 ms windows)</text>`,
  // The slow spell.
  `<rect x="${fmt(x(30_000))}" y="${m.top}" width="${fmt(x(60_000) - x(30_000))}" height="${plotH}" fill="#f3e6c8"/>`,
  `<text x="${fmt((x(30_000) + x(60_000)) / 2)}" y="${m.top + 16}" text-anchor="middle" fill="#8a6d1f">service time 300 ms</text>`,
  `<text x="${fmt(x(15_000))}" y="${m.top + 16}" text-anchor="middle" fill="#555">30 ms</text>`,
  `<text x="${fmt(x(80_000))}" y="${m.top + 16}" text-anchor="middle" fill="#555">30 ms</text>`,
);
// Axes and grid.
for (let v = 0; v <= yMax; v += 20) {
  parts.push(
    `<line x1="${m.left}" x2="${m.left + plotW}" y1="${fmt(y(v))}" y2="${fmt(y(v))}" stroke="#ddd"/>`,
    `<text x="${m.left - 8}" y="${fmt(y(v) + 4)}" text-anchor="end">${v}</text>`,
  );
}
for (let t = 0; t <= endMs; t += 10_000) {
  parts.push(
    `<line x1="${fmt(x(t))}" x2="${fmt(x(t))}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" stroke="#333"/>`,
    `<text x="${fmt(x(t))}" y="${m.top + plotH + 20}" text-anchor="middle">${t / 1_000}</text>`,
  );
}
parts.push(
  `<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" stroke="#333"/>`,
  `<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" stroke="#333"/>`,
  `<text x="${m.left + plotW / 2}" y="${height - 12}" text-anchor="middle">time (s)</text>`,
  `<text transform="translate(16 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle">concurrency limit</text>`,
  // The truth: 40 slots, and 80 in flight before the database starts refusing.
  `<line x1="${m.left}" x2="${m.left + plotW}" y1="${fmt(y(slots))}" y2="${fmt(y(slots))}" stroke="#000" stroke-dasharray="6 4"/>`,
  `<line x1="${m.left}" x2="${m.left + plotW}" y1="${fmt(y(slots + serverQueue))}" y2="${fmt(y(slots + serverQueue))}" stroke="#999" stroke-dasharray="2 4"/>`,
);
for (const s of series) {
  const d = s.points
    .map(([t, v], i) => `${i === 0 ? 'M' : 'L'}${fmt(x(t))} ${fmt(y(v))}`)
    .join(' ');
  parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
}
// Legend.
const legend = [
  ...series.map((s) => ({ label: s.name, stroke: s.color, dash: '' })),
  { label: `K = ${slots} slots`, stroke: '#000', dash: '6 4' },
  { label: `K + line = ${slots + serverQueue}`, stroke: '#999', dash: '2 4' },
];
legend.forEach((l, i) => {
  const ly = m.top + 10 + i * 22;
  const lx = m.left + plotW + 16;
  parts.push(
    `<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${l.stroke}" stroke-width="2"${l.dash ? ` stroke-dasharray="${l.dash}"` : ''}/>`,
    `<text x="${lx + 30}" y="${ly + 4}">${l.label}</text>`,
  );
});
parts.push(
  `<text x="${m.left + plotW + 16}" y="${m.top + 10 + legend.length * 22 + 16}" fill="#555">2,000 req/s offered;</text>`,
  `<text x="${m.left + plotW + 16}" y="${m.top + 10 + legend.length * 22 + 32}" fill="#555">scripts/adaptive-chart.js</text>`,
  '</svg>',
);
writeFileSync(values.out, `${parts.join('\n')}\n`);
for (const s of series) {
  const at = (t) => s.points.find(([pt]) => pt >= t)[1];
  console.log(
    `${s.name}: ${at(29_000)} before, ${at(40_000)} at 40 s, ${at(59_000)} at 59 s, ${at(99_000)} at 99 s`,
  );
}
console.log(`wrote ${values.out}`);
