/**
 * The script of the report page, run in the browser: it reads the embedded data and draws the
 * header, the summary table and the charts with uPlot (inlined beside it). Plain ES2019 in a
 * string; it uses no template literals, and builds the DOM with textContent only (labels are
 * user input). The charts' code lives beside it (`goodput-chart-script.ts`,
 * `run-cards-script.ts`) and runs in this script's scope, with its helpers.
 *
 * @module
 */
import { goodputChartScript } from './goodput-chart-script.js';
import { runCardsScript } from './run-cards-script.js';

const page = String.raw`
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var uPlot = window.uPlot;
  var C = {
    offered: '#64748b', ok: '#16a34a', rejected: '#d97706', timeout: '#dc2626',
    error: '#7c3aed', network: '#0891b2', dropped: '#0f172a', p50: '#0ea5e9', p99: '#4338ca',
    grid: '#e2e8f0', axis: '#475569'
  };
  var palette = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d'];
  var charts = [];
  var root = document.getElementById('report');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function int(n) { return Math.round(n).toLocaleString('en-US'); }
  function rate(n) { return n < 100 ? n.toFixed(1) : int(n); }
  // A number and its unit never part where a narrow table wraps (a no-break space).
  function ms(v) {
    if (v === null || v === undefined) return '–';
    if (v < 10) return v.toFixed(2) + '\u00a0ms';
    if (v < 100) return v.toFixed(1) + '\u00a0ms';
    if (v < 10000) return int(v) + '\u00a0ms';
    return (v / 1000).toFixed(1) + '\u00a0s';
  }
  function short(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e3) return (v / 1e3).toFixed(v >= 1e4 ? 0 : 1) + 'k';
    return String(Math.round(v * 100) / 100);
  }
  function lat(s, key) { return s ? s[key] : null; }
  // A legend shows the whole run's figure while the cursor is off its chart (so a screenshot or
  // a printout reads), and the hovered point's while it is on.
  function legend(whole, point) {
    return function (u, v, si, idx) { return idx === null || idx === undefined ? whole : point(v); };
  }
  function width(container) { return Math.max(240, Math.floor(container.clientWidth)); }
  function chart(container, opts, columns) {
    opts.width = width(container);
    var u = new uPlot(opts, columns, container);
    charts.push({ u: u, container: container });
    return u;
  }
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.u.setSize({ width: width(c.container), height: c.u.height }); });
  });

  function header() {
    var head = add(root, el('header'));
    add(head, el('h1', null, data.title));
    if (data.subtitle) add(head, el('p', 'subtitle', data.subtitle));
    var meta = [new Date(data.generatedAt).toUTCString()];
    if (data.machine) {
      meta.push(data.machine.cpuModel + ', ' + data.machine.cpus + ' CPUs');
      meta.push('Node ' + data.machine.node + ' · ' + data.machine.platform);
    }
    if (data.capacityPerSec) meta.push('capacity ' + int(data.capacityPerSec) + ' req/s');
    add(head, el('p', 'meta', meta.join('  ·  ')));
    data.notes.forEach(function (n) { add(head, el('p', 'note', n)); });

    var invalid = data.runs.filter(function (r) { return !r.valid; });
    if (invalid.length > 0) {
      var warn = add(root, el('section', 'warning'));
      add(warn, el('strong', null, invalid.length + ' of ' + data.runs.length +
        (data.runs.length === 1 ? ' run is' : ' runs are') + ' not valid: the generator could not keep its schedule, so these numbers are flagged, not quotable.'));
      var ul = add(warn, el('ul'));
      invalid.forEach(function (r) { add(ul, el('li', null, r.label + ': ' + r.reasons.join('; '))); });
    }
  }

  function summaryTable() {
    var noteKeys = [];
    data.runs.forEach(function (r) { Object.keys(r.notes).forEach(function (k) { if (noteKeys.indexOf(k) < 0) noteKeys.push(k); }); });
    var anyRetries = data.runs.some(function (r) { return r.totals.retries > 0; });
    function anyOf(key) { return data.runs.some(function (r) { return r.totals[key] > 0; }); }
    var cols = [
      ['Run', function (s) { return s.name; }, 'text'],
      ['Offered/s', function (s) { return rate(s.offeredPerSec); }],
      ['OK', function (s) { return int(s.ok); }],
      ['Goodput/s', function (s) { return rate(s.goodputPerSec); }, 'key']
    ];
    if (data.capacityPerSec) cols.push(['÷ capacity', function (s) { return (s.goodputPerSec / data.capacityPerSec).toFixed(2); }, 'key']);
    cols = cols.concat([
      ['OK p50', function (s) { return ms(lat(s.latencyMs.ok, 'p50')); }],
      ['OK p99', function (s) { return ms(lat(s.latencyMs.ok, 'p99')); }],
      ['Rejected', function (s) {
        var parts = Object.keys(s.rejectedByStatus).map(function (k) { return k + ':\u00a0' + int(s.rejectedByStatus[k]); });
        return int(s.rejected) + (parts.length > 1 ? ' (' + parts.join(', ') + ')' : parts.length === 1 ? ' (' + Object.keys(s.rejectedByStatus)[0] + ')' : '');
      }],
      ['Rej. p99', function (s) { return ms(lat(s.latencyMs.rejected, 'p99')); }],
      ['Timeouts', function (s) { return int(s.timeout); }]
    ]);
    var quiet = [];
    [['error', 'Errors'], ['network', 'Network'], ['dropped', 'Dropped']].forEach(function (k) {
      if (anyOf(k[0])) cols.push([k[1], function (s) { return int(s[k[0]]); }]);
      else quiet.push(k[1].toLowerCase());
    });
    if (anyRetries) cols.push(['Attempts', function (s) { return int(s.attempts); }]);
    var section = add(root, el('section', 'card'));
    add(section, el('h2', null, 'Summary'));
    var scroll = add(section, el('div', 'scroll'));
    var table = add(scroll, el('table', 'summary'));
    var tr = add(add(table, el('thead')), el('tr'));
    cols.forEach(function (c) { add(tr, el('th', c[2] === 'text' ? 'text' : null, c[0])); });
    var tbody = add(table, el('tbody'));
    data.runs.forEach(function (r) {
      var rows = [{ s: r.totals, name: r.label, run: true }];
      if (r.groups.length > 1) r.groups.forEach(function (g) { rows.push({ s: g, name: g.name, run: false }); });
      rows.forEach(function (row) {
        var tr = add(tbody, el('tr', (row.run ? 'run' : 'group') + (r.valid ? '' : ' invalid')));
        cols.forEach(function (c, i) {
          var text = i === 0 ? row.name : c[1](row.s);
          var td = add(tr, el('td', (c[2] || '') + (text === '0' || text === '–' ? ' zero' : ''), text));
          if (i === 0 && row.run && r.series !== r.label) td.title = r.url;
        });
        if (!row.run) return;
        // The notes and the generator's verdict go on a line under the run, not in columns
        // of their own, so the table fits a narrow window instead of hiding its right side.
        var line = add(add(tbody, el('tr', 'details' + (r.valid ? '' : ' invalid'))), el('td', 'text'));
        line.colSpan = cols.length;
        noteKeys.forEach(function (k) { if (r.notes[k] !== undefined) add(line, el('span', null, k + ': ' + r.notes[k])); });
        var generator = add(line, el('span', r.valid ? null : 'bad', 'generator: ' + (r.valid ? '✓' : '✗') +
          ' lag p99 ' + ms(r.lagP99Ms) + ', CPU ' + Math.round(r.cpuPercent) + '\u00a0%'));
        if (!r.valid) generator.title = r.reasons.join('\n');
      });
    });
    if (quiet.length > 0) add(section, el('p', 'caption', 'No ' + quiet.join(', ').replace(/, ([^,]*)$/, ' or $1') + ' in any run.'));
    add(section, el('p', 'caption', 'Goodput: ok answers within the caller\'s deadline (or SLO), per second of schedule. ' +
      'Latencies count from the moment each request should have been sent (open loop, no coordinated omission); ' +
      'rejections (429/503) are never mixed into the latency of ok answers.'));
  }

`;

// After every part has run its var statements (function declarations alone are hoisted).
const draw = `
  header();
  summaryTable();
  goodputChart();
  scenarioCards();
  document.body.setAttribute('data-rendered', String(charts.length));
`;

/** The page's script: one function scope holding the page, its helpers and its charts. */
export const reportScript = `(function () {
  'use strict';${page}${goodputChartScript}${runCardsScript}${draw}})();`;
