/**
 * The script of the report page, run in the browser: it reads the embedded data and draws the
 * summary table and the charts with uPlot (inlined beside it). Plain ES2019 in a string; it
 * uses no template literals, and builds the DOM with textContent only (labels are user input).
 *
 * @module
 */
export const reportScript = String.raw`(function () {
  'use strict';
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
  function ms(v) {
    if (v === null || v === undefined) return '–';
    if (v < 10) return v.toFixed(2) + ' ms';
    if (v < 100) return v.toFixed(1) + ' ms';
    if (v < 10000) return int(v) + ' ms';
    return (v / 1000).toFixed(1) + ' s';
  }
  function short(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(1) + 'M';
    if (v >= 1e3) return (v / 1e3).toFixed(v >= 1e4 ? 0 : 1) + 'k';
    return String(Math.round(v * 100) / 100);
  }
  function msTick(v) {
    if (v === null || v === undefined) return '';
    return v >= 1000 ? (v / 1000) + ' s' : (v < 1 ? v.toFixed(2) : String(v)) + ' ms';
  }
  function lat(s, key) { return s ? s[key] : null; }
  function width(container) { return Math.max(240, Math.floor(container.clientWidth)); }
  var secondSteps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600];
  function axes(yValues, yLabel) {
    return [
      { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 },
        incrs: secondSteps, space: 46,
        values: function (u, vals) { return vals.map(function (v) { return v === null ? '' : v + ' s'; }); } },
      { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 },
        size: 64, space: 28, label: yLabel, labelSize: 20, labelFont: '12px system-ui, sans-serif',
        values: function (u, vals) { return vals.map(function (v) { return v === null ? '' : yValues(v); }); } }
    ];
  }
  function chart(container, opts, columns) {
    opts.width = width(container);
    var u = new uPlot(opts, columns, container);
    charts.push({ u: u, container: container });
    return u;
  }
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.u.setSize({ width: width(c.container), height: c.u.height }); });
  });

  // Header
  var header = add(root, el('header'));
  add(header, el('h1', null, data.title));
  if (data.subtitle) add(header, el('p', 'subtitle', data.subtitle));
  var meta = [new Date(data.generatedAt).toUTCString()];
  if (data.machine) {
    meta.push(data.machine.cpuModel + ', ' + data.machine.cpus + ' CPUs');
    meta.push('Node ' + data.machine.node + ' · ' + data.machine.platform);
  }
  if (data.capacityPerSec) meta.push('capacity ' + int(data.capacityPerSec) + ' req/s');
  add(header, el('p', 'meta', meta.join('  ·  ')));
  data.notes.forEach(function (n) { add(header, el('p', 'note', n)); });

  var invalid = data.runs.filter(function (r) { return !r.valid; });
  if (invalid.length > 0) {
    var warn = add(root, el('section', 'warning'));
    add(warn, el('strong', null, invalid.length + ' of ' + data.runs.length +
      (data.runs.length === 1 ? ' run is' : ' runs are') + ' not valid: the generator could not keep its schedule, so these numbers are flagged, not quotable.'));
    var ul = add(warn, el('ul'));
    invalid.forEach(function (r) { add(ul, el('li', null, r.label + ': ' + r.reasons.join('; '))); });
  }

  // Summary table
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
      var parts = Object.keys(s.rejectedByStatus).map(function (k) { return k + ': ' + int(s.rejectedByStatus[k]); });
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
  noteKeys.forEach(function (k) { add(tr, el('th', null, k)); });
  add(tr, el('th', null, 'Generator: lag p99 · CPU'));
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
      noteKeys.forEach(function (k) { add(tr, el('td', null, row.run && r.notes[k] !== undefined ? r.notes[k] : '')); });
      var v = add(tr, el('td', row.run && !r.valid ? 'bad' : null, row.run
        ? (r.valid ? '✓ ' : '✗ ') + ms(r.lagP99Ms) + ' · ' + Math.round(r.cpuPercent) + ' %' : ''));
      if (row.run && !r.valid) v.title = r.reasons.join('\n');
    });
  });
  if (quiet.length > 0) add(section, el('p', 'caption', 'No ' + quiet.join(', ').replace(/, ([^,]*)$/, ' or $1') + ' in any run.'));
  add(section, el('p', 'caption', 'Goodput: ok answers within the caller\'s deadline (or SLO), per second of schedule. ' +
    'Latencies count from the moment each request should have been sent (open loop, no coordinated omission); ' +
    'rejections (429/503) are never mixed into the latency of ok answers.'));

  // Goodput vs offered load, from the runs that are about load (see ReportRun.goodputChart)
  var loadRuns = data.runs.filter(function (r) { return r.goodputChart; });
  if (loadRuns.length > 1) {
    var gsec = add(root, el('section', 'card'));
    add(gsec, el('h2', null, 'Goodput vs offered load'));
    // Colours by each series' place among all runs, so a series keeps its colour on the page.
    var allNames = [];
    data.runs.forEach(function (r) { if (allNames.indexOf(r.series) < 0) allNames.push(r.series); });
    var names = allNames.filter(function (n) { return loadRuns.some(function (r) { return r.series === n; }); });
    var xs = [];
    loadRuns.forEach(function (r) { var x = Math.round(r.totals.offeredPerSec); if (xs.indexOf(x) < 0) xs.push(x); });
    xs.sort(function (a, b) { return a - b; });
    var cols2 = [xs];
    var series = [{ label: 'offered', value: function (u, v) { return v === null ? '–' : int(v) + ' req/s'; } }];
    var ymax = 0;
    names.forEach(function (name, i) {
      cols2.push(xs.map(function (x) {
        var pts = loadRuns.filter(function (r) { return r.series === name && Math.round(r.totals.offeredPerSec) === x; });
        if (pts.length === 0) return null;
        var g = pts.reduce(function (a, r) { return a + r.totals.goodputPerSec; }, 0) / pts.length;
        ymax = Math.max(ymax, g);
        return g;
      }));
      var colour = palette[allNames.indexOf(name) % palette.length];
      series.push({ label: name, stroke: colour, width: 2.5, spanGaps: true,
        points: { show: true, size: 9, fill: colour },
        value: function (u, v) { return v === null ? '–' : rate(v) + ' req/s'; } });
    });
    if (data.capacityPerSec) {
      var cap = data.capacityPerSec;
      cols2.push(xs.map(function (x) { return Math.min(x, cap); }));
      series.push({ label: 'ideal: min(offered, capacity)', stroke: C.offered, dash: [6, 5], width: 1.5,
        points: { show: false }, value: function (u, v) { return v === null ? '–' : int(v) + ' req/s'; } });
      ymax = Math.max(ymax, cap);
    }
    var gbox = add(gsec, el('div', 'chart'));
    chart(gbox, {
      height: 300,
      scales: { x: { time: false, range: [0, Math.max.apply(null, xs) * 1.05] }, y: { range: [0, ymax * 1.12 || 1] } },
      axes: [
        { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 }, label: 'offered (req/s)',
          labelSize: 18, labelFont: '12px system-ui, sans-serif', values: function (u, v) { return v.map(short); } },
        { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 }, size: 56,
          label: 'goodput (req/s)', labelSize: 18, labelFont: '12px system-ui, sans-serif', values: function (u, v) { return v.map(short); } }
      ],
      series: series
    }, cols2);
    var left = data.runs.length - loadRuns.length;
    add(gsec, el('p', 'caption', 'Each point is one run (the mean, where a server has several at the same offered load)' +
      (left > 0 ? '; ' + left + ' run' + (left > 1 ? 's' : '') + ' not about load (fairness, slowdown) are left out' : '') +
      '. A server that sheds load keeps goodput flat at its capacity however much is offered; one that queues everything collapses.'));
  }

  // Per scenario: runs side by side with shared axes
  var scenarios = [];
  data.runs.forEach(function (r) { if (scenarios.indexOf(r.scenario) < 0) scenarios.push(r.scenario); });
  scenarios.forEach(function (name, si) {
    var runs = data.runs.filter(function (r) { return r.scenario === name; });
    var sec = add(root, el('section', 'scenario'));
    if (scenarios.length > 1 || runs.length > 1 || name !== runs[0].label) add(sec, el('h2', null, name));
    var grid = add(sec, el('div', runs.length > 1 ? 'grid' : 'grid single'));
    var rmax = 1, lo = Infinity, hi = 0;
    runs.forEach(function (r) {
      ['offered', 'ok', 'rejected', 'timeout', 'error', 'network', 'dropped'].forEach(function (k) {
        r.windows[k].forEach(function (v) { if (v > rmax) rmax = v; });
      });
      r.windows.p50.concat(r.windows.p99).forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    });
    var latRange = hi > 0 ? [Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(hi)))] : null;
    runs.forEach(function (r) {
      var card = add(grid, el('article', 'card run' + (r.valid ? '' : ' invalid')));
      var head = add(card, el('div', 'run-head'));
      add(head, el('h3', null, runs.length > 1 || r.series !== r.label ? r.series : r.label));
      add(head, el('span', r.valid ? 'badge ok' : 'badge bad', r.valid ? 'valid run' : 'not valid'));
      var t = r.totals;
      var kpis = add(card, el('div', 'kpis'));
      [['goodput', rate(t.goodputPerSec) + '/s', data.capacityPerSec ? (t.goodputPerSec / data.capacityPerSec).toFixed(2) + '× capacity' : ''],
       ['ok p99', ms(lat(t.latencyMs.ok, 'p99')), 'p50 ' + ms(lat(t.latencyMs.ok, 'p50'))],
       ['rejected', int(t.rejected), t.rejected > 0 ? 'p99 ' + ms(lat(t.latencyMs.rejected, 'p99')) : ''],
       ['timeouts', int(t.timeout), t.sent > 0 ? (100 * t.timeout / t.sent).toFixed(1) + ' % of sent' : '']].forEach(function (k) {
        var d = add(kpis, el('div', 'kpi'));
        add(d, el('span', 'kpi-label', k[0]));
        add(d, el('span', 'kpi-value', k[1]));
        add(d, el('span', 'kpi-sub', k[2]));
      });
      add(card, el('p', 'detail', int(t.offeredPerSec) + ' req/s offered for ' + (r.durationMs / 1000).toFixed(1) + ' s · ' + r.connection +
        ' connections · retry ' + r.retry + ' · ' + r.url));
      var w = r.windows;
      add(card, el('h4', null, 'Per second'));
      var box = add(card, el('div', 'chart'));
      var cols3 = [w.t, w.offered, w.ok, w.rejected, w.timeout];
      var ser = [
        { label: 'time', value: function (u, v) { return v === null ? '–' : v.toFixed(0) + ' s'; } },
        { label: 'offered', stroke: C.offered, dash: [6, 4], width: 2 },
        { label: 'ok', stroke: C.ok, width: 2, fill: 'rgba(22,163,74,0.10)' },
        { label: 'rejected', stroke: C.rejected, width: 2 },
        { label: 'timed out', stroke: C.timeout, width: 2 }
      ];
      ['error', 'network', 'dropped'].forEach(function (k) {
        if (w[k].some(function (v) { return v > 0; })) { cols3.push(w[k]); ser.push({ label: k, stroke: C[k], width: 1.5 }); }
      });
      ser.slice(1).forEach(function (s) { s.value = function (u, v) { return v === null ? '–' : rate(v) + '/s'; }; });
      chart(box, { height: 220, scales: { x: { time: false }, y: { range: [0, rmax * 1.08] } },
        axes: axes(short, 'req/s'), series: ser, cursor: { sync: { key: 'scenario-' + si } } }, cols3);
      add(card, el('h4', null, 'Latency of ok answers, from the intended send time'));
      var lbox = add(card, el('div', 'chart'));
      if (latRange === null || !w.p99.some(function (v) { return v !== null; })) {
        add(lbox, el('p', 'empty', 'No ok answers in this run.'));
      } else {
        chart(lbox, { height: 200, scales: { x: { time: false }, y: { distr: 3, log: 10, range: latRange } },
          axes: axes(msTick, 'ms (log)'), cursor: { sync: { key: 'scenario-' + si } },
          series: [
            { label: 'time', value: function (u, v) { return v === null ? '–' : v.toFixed(0) + ' s'; } },
            { label: 'p50', stroke: C.p50, width: 2, spanGaps: false, value: function (u, v) { return ms(v); } },
            { label: 'p99', stroke: C.p99, width: 2, spanGaps: false, value: function (u, v) { return ms(v); } }
          ] }, [w.t, w.p50, w.p99]);
      }
      if (!r.valid) add(card, el('p', 'why', 'Not valid: ' + r.reasons.join('; ')));
    });
  });
  document.body.setAttribute('data-rendered', String(charts.length));
})();`;
