/**
 * The report's run cards, as page script (runs in the scope of `report-script.ts`, with its
 * helpers): per scenario, its runs side by side on shared axes, each with its figures, the
 * goodput of each group (when it has several), its rates and the latency of its ok answers
 * over time, then its extra panels (figures measured elsewhere, e.g. the server's decisions),
 * each on the same axis across the scenario's runs. Legends show the run's own figures until a
 * point is hovered.
 *
 * @module
 */
export const runCardsScript = String.raw`
  var secondSteps = [0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600];
  function msTick(v) {
    if (v === null || v === undefined) return '';
    return v >= 1000 ? (v / 1000) + ' s' : (v < 1 ? v.toFixed(2) : String(v)) + ' ms';
  }
  function axes(yValues, yLabel) {
    return [
      { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 },
        incrs: secondSteps, space: 50,
        values: function (u, vals) { return vals.map(function (v) { return v === null ? '' : v + ' s'; }); } },
      { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 },
        size: 64, space: 28, label: yLabel, labelSize: 20, labelFont: '12px system-ui, sans-serif',
        values: function (u, vals) { return vals.map(function (v) { return v === null ? '' : yValues(v); }); } }
    ];
  }
  function perSec(v) { return v === null || v === undefined ? '–' : rate(v) + '/s'; }
  // The x series: the point's end while hovering, else what the other values are.
  function timeSeries(r, whole) {
    return { label: 'time', value: legend(whole, function (v) {
      return v === null ? '–' : v.toFixed(r.grainMs < 1000 ? 2 : 0) + ' s';
    }) };
  }
  // A card's charts share their time axis: the run's points and its panels' together.
  function xScale(r) {
    if (r.panels.length === 0) return { time: false };
    var ts = r.timeline.t;
    r.panels.forEach(function (p) { ts = ts.concat(p.t); });
    var lo = Math.min.apply(null, ts), hi = Math.max.apply(null, ts);
    return hi > lo ? { time: false, range: [lo, hi] } : { time: false };
  }
  function grainText(r) { return r.grainMs < 1000 ? 'per ' + r.grainMs + ' ms' : 'per second'; }

  function kpis(card, r) {
    var t = r.totals;
    var list = [];
    var lead = r.groups.filter(function (g) { return g.name === r.leadGroup; })[0];
    if (lead) {
      // The group the scenario is about comes first: a total would hide how it was served.
      list.push([lead.name + ' goodput', rate(lead.goodputPerSec) + '/s', lead.offeredPerSec > 0
        ? Math.round(100 * lead.goodputPerSec / lead.offeredPerSec) + ' % of its ' + rate(lead.offeredPerSec) + '/s' : '', 'lead']);
    }
    list.push([lead ? 'all goodput' : 'goodput', rate(t.goodputPerSec) + '/s', data.capacityPerSec ? (t.goodputPerSec / data.capacityPerSec).toFixed(2) + '× capacity' : '']);
    // Four figures fit a card: the lead group's goodput takes the place of the total's latency.
    if (!lead) list.push(['ok p99', ms(lat(t.latencyMs.ok, 'p99')), 'p50 ' + ms(lat(t.latencyMs.ok, 'p50'))]);
    list.push(['rejected', int(t.rejected), t.rejected > 0 ? 'p99 ' + ms(lat(t.latencyMs.rejected, 'p99')) : '']);
    list.push(['timeouts', int(t.timeout), t.sent > 0 ? (100 * t.timeout / t.sent).toFixed(1) + ' % of sent' : '']);
    var box = add(card, el('div', 'kpis'));
    list.forEach(function (k) {
      var d = add(box, el('div', k[3] ? 'kpi ' + k[3] : 'kpi'));
      add(d, el('span', 'kpi-label', k[0]));
      add(d, el('span', 'kpi-value', k[1]));
      add(d, el('span', 'kpi-sub', k[2]));
    });
  }

  // Goodput of each group (solid) against what it offered (dashed, same colour).
  function groupChart(card, r, ymax, sync) {
    add(card, el('h4', null, 'Goodput per group, ' + grainText(r) + ' (dashed: offered)'));
    var box = add(card, el('div', 'chart'));
    var columns = [r.timeline.t];
    var series = [timeSeries(r, 'run mean')];
    r.groupTimelines.forEach(function (g, i) {
      var s = r.groups.filter(function (x) { return x.name === g.name; })[0];
      var colour = palette[i % palette.length];
      columns.push(g.good, g.offered);
      series.push({ label: g.name, stroke: colour, width: 2.5, value: legend(rate(s.goodputPerSec) + '/s', perSec) });
      series.push({ label: g.name + ' offered', stroke: colour, width: 1.25, dash: [5, 4], value: legend(rate(s.offeredPerSec) + '/s', perSec) });
    });
    chart(box, { height: 200, scales: { x: xScale(r), y: { range: [0, ymax * 1.08] } },
      axes: axes(short, 'req/s'), series: series, cursor: { sync: { key: sync } } }, columns);
    if (r.groups.length > r.groupTimelines.length) {
      add(card, el('p', 'caption', 'The first ' + r.groupTimelines.length + ' of ' + r.groups.length + ' groups; the table has them all.'));
    }
  }

  function ratesChart(card, r, ymax, sync) {
    var w = r.timeline, t = r.totals;
    function whole(count) { return rate(count * 1000 / r.durationMs) + '/s'; }
    add(card, el('h4', null, 'Rates, ' + grainText(r)));
    var box = add(card, el('div', 'chart'));
    var columns = [w.t, w.offered, w.ok, w.rejected, w.timeout];
    var series = [
      timeSeries(r, 'run mean'),
      { label: 'offered', stroke: C.offered, dash: [6, 4], width: 2, value: legend(rate(t.offeredPerSec) + '/s', perSec) },
      { label: 'ok', stroke: C.ok, width: 2, fill: 'rgba(22,163,74,0.10)', value: legend(rate(t.okPerSec) + '/s', perSec) },
      { label: 'rejected', stroke: C.rejected, width: 2, value: legend(whole(t.rejected), perSec) },
      { label: 'timed out', stroke: C.timeout, width: 2, value: legend(whole(t.timeout), perSec) }
    ];
    ['error', 'network', 'dropped'].forEach(function (k) {
      if (!w[k].some(function (v) { return v > 0; })) return;
      columns.push(w[k]);
      series.push({ label: k, stroke: C[k], width: 1.5, value: legend(whole(t[k]), perSec) });
    });
    chart(box, { height: 220, scales: { x: xScale(r), y: { range: [0, ymax * 1.08] } },
      axes: axes(short, 'req/s'), series: series, cursor: { sync: { key: sync } } }, columns);
  }

  function latencyChart(card, r, range, sync) {
    var w = r.timeline, ok = r.totals.latencyMs.ok;
    add(card, el('h4', null, 'Latency of ok answers, from the intended send time'));
    var box = add(card, el('div', 'chart'));
    if (range === null || !w.p99.some(function (v) { return v !== null; })) {
      add(box, el('p', 'empty', 'No ok answers in this run.'));
      return;
    }
    chart(box, { height: 200, scales: { x: xScale(r), y: { distr: 3, log: 10, range: range } },
      axes: axes(msTick, 'ms (log)'), cursor: { sync: { key: sync } },
      series: [
        timeSeries(r, 'whole run'),
        { label: 'p50', stroke: C.p50, width: 2, spanGaps: false, value: legend(ms(lat(ok, 'p50')), ms) },
        { label: 'p99', stroke: C.p99, width: 2, spanGaps: false, value: legend(ms(lat(ok, 'p99')), ms) }
      ] }, [w.t, w.p50, w.p99]);
  }

  // A panel of figures measured elsewhere (see report-panel.ts), on the scenario's shared axis.
  function panelChart(card, r, p, ymax, sync) {
    var format = p.unit === 'ms' ? ms : p.unit === 'per-second' ? perSec : function (v) {
      return v === null || v === undefined ? '–' : short(v);
    };
    var tick = p.unit === 'ms' ? function (v) { return v === 0 ? '0' : msTick(v); } : short;
    add(card, el('h4', null, p.title));
    var box = add(card, el('div', 'chart'));
    var columns = [p.t];
    var series = [timeSeries(r, 'whole run')];
    p.series.forEach(function (s, i) {
      columns.push(s.values);
      var colour = s.colour || palette[i % palette.length];
      series.push({ label: s.label, stroke: colour, width: s.dashed ? 1.5 : 2, dash: s.dashed ? [6, 4] : undefined,
        fill: s.fill ? colour + '26' : undefined, spanGaps: false, value: legend(s.whole, format) });
    });
    chart(box, { height: 180, scales: { x: xScale(r), y: { range: [0, ymax * 1.08] } },
      axes: axes(tick, p.unit === 'ms' ? 'ms' : p.unit === 'per-second' ? 'req/s' : 'requests'),
      series: series, cursor: { sync: { key: sync } } }, columns);
    if (p.caption) add(card, el('p', 'caption', p.caption));
  }

  // Per scenario: runs side by side with shared axes
  function scenarioCards() {
    var scenarios = [];
    data.runs.forEach(function (r) { if (scenarios.indexOf(r.scenario) < 0) scenarios.push(r.scenario); });
    scenarios.forEach(function (name, si) {
      var runs = data.runs.filter(function (r) { return r.scenario === name; });
      var sec = add(root, el('section', 'scenario'));
      if (scenarios.length > 1 || runs.length > 1 || name !== runs[0].label) add(sec, el('h2', null, name));
      var grid = add(sec, el('div', runs.length > 1 ? 'grid' : 'grid single'));
      var rmax = 1, gmax = 1, lo = Infinity, hi = 0, pmax = {};
      runs.forEach(function (r) {
        r.panels.forEach(function (p) {
          p.series.forEach(function (s) {
            s.values.forEach(function (v) { if (v !== null && v > (pmax[p.title] || 1)) pmax[p.title] = v; });
          });
        });
        ['offered', 'ok', 'rejected', 'timeout', 'error', 'network', 'dropped'].forEach(function (k) {
          r.timeline[k].forEach(function (v) { if (v > rmax) rmax = v; });
        });
        r.groupTimelines.forEach(function (g) {
          g.good.concat(g.offered).forEach(function (v) { if (v > gmax) gmax = v; });
        });
        r.timeline.p50.concat(r.timeline.p99).forEach(function (v) { if (v !== null) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
      });
      var latRange = hi > 0 ? [Math.pow(10, Math.floor(Math.log10(lo))), Math.pow(10, Math.ceil(Math.log10(hi)))] : null;
      var sync = 'scenario-' + si;
      runs.forEach(function (r) {
        var card = add(grid, el('article', 'card run' + (r.valid ? '' : ' invalid')));
        var head = add(card, el('div', 'run-head'));
        add(head, el('h3', null, runs.length > 1 || r.series !== r.label ? r.series : r.label));
        add(head, el('span', r.valid ? 'badge ok' : 'badge bad', r.valid ? 'generator on schedule' : 'not valid'));
        kpis(card, r);
        add(card, el('p', 'detail', int(r.totals.offeredPerSec) + ' req/s offered for ' + (r.durationMs / 1000).toFixed(1) + ' s · ' + r.connection +
          ' connections · retry ' + r.retry + ' · ' + r.url));
        if (r.groupTimelines.length > 0) groupChart(card, r, gmax, sync);
        ratesChart(card, r, rmax, sync);
        latencyChart(card, r, latRange, sync);
        r.panels.forEach(function (p) { panelChart(card, r, p, pmax[p.title] || 1, sync); });
        if (!r.valid) add(card, el('p', 'why', 'Not valid: ' + r.reasons.join('; ')));
      });
    });
  }
`;
