/**
 * The report's goodput-vs-offered-load chart, as page script (runs in the scope of
 * `report-script.ts`, with its helpers). A demo measures each server at two or three offered
 * loads, so the chart draws what was measured and no more: points, joined only where a series
 * has enough of them to show a shape; the ideal, min(offered, capacity), as a dashed line with
 * its knee. Servers that reach the same goodput (every bounded one, at capacity) would hide
 * one another, so markers shrink from one series to the next (coinciding points read as
 * rings) and every point carries its own label, stacked where points meet.
 *
 * @module
 */
export const goodputChartScript = String.raw`
  // Goodput vs offered load, from the runs that are about load (see ReportRun.goodputChart)
  function goodputChart() {
    var loadRuns = data.runs.filter(function (r) { return r.goodputChart; });
    if (loadRuns.length < 2) return;
    var sec = add(root, el('section', 'card'));
    add(sec, el('h2', null, 'Goodput vs offered load'));
    // Colours by each series' place among all runs, so a series keeps its colour on the page.
    var allNames = [];
    data.runs.forEach(function (r) { if (allNames.indexOf(r.series) < 0) allNames.push(r.series); });
    var names = allNames.filter(function (n) { return loadRuns.some(function (r) { return r.series === n; }); });
    var measured = [];
    loadRuns.forEach(function (r) { var x = Math.round(r.totals.offeredPerSec); if (measured.indexOf(x) < 0) measured.push(x); });
    var cap = data.capacityPerSec;
    // The ideal's knee and origin are x values too (no server has a point there).
    var xs = measured.concat(cap ? [0, Math.round(cap)] : []).filter(function (x, i, all) { return all.indexOf(x) === i; });
    xs.sort(function (a, b) { return a - b; });
    var columns = [xs];
    var series = [{ label: 'offered' }];
    var ymax = 0;
    // The ideal goes first, so it is drawn under the points that reach it.
    if (cap) {
      columns.push(xs.map(function (x) { return Math.min(x, cap); }));
      series.push({ label: 'ideal: min(offered, capacity)', stroke: C.offered, dash: [6, 5], width: 1.5,
        points: { show: false } });
      ymax = cap;
    }
    var first = series.length;
    names.forEach(function (name, i) {
      var points = 0;
      columns.push(xs.map(function (x) {
        var runs = loadRuns.filter(function (r) { return r.series === name && Math.round(r.totals.offeredPerSec) === x; });
        if (runs.length === 0) return null;
        points++;
        var g = runs.reduce(function (a, r) { return a + r.totals.goodputPerSec; }, 0) / runs.length;
        ymax = Math.max(ymax, g);
        return g;
      }));
      var colour = palette[allNames.indexOf(name) % palette.length];
      series.push({ label: name, stroke: colour, width: 2, spanGaps: true,
        // Two points joined would claim a straight line between them that nobody measured.
        paths: points >= 3 ? undefined : function () { return null; },
        points: { show: true, size: Math.max(6, 20 - 6 * i), fill: colour, stroke: '#fff', width: 1.5 } });
    });
    var box = add(sec, el('div', 'chart'));
    chart(box, {
      height: 320,
      // Values are on the points; the legend names the series.
      legend: { live: false },
      cursor: { show: false },
      scales: { x: { time: false, range: [0, Math.max.apply(null, xs) * 1.05] }, y: { range: [0, ymax * 1.15 || 1] } },
      axes: [
        { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 }, label: 'offered (req/s)',
          labelSize: 18, labelFont: '12px system-ui, sans-serif', values: function (u, v) { return v.map(short); } },
        { stroke: C.axis, grid: { stroke: C.grid, width: 1 }, ticks: { stroke: C.grid, width: 1 }, size: 56,
          label: 'goodput (req/s)', labelSize: 18, labelFont: '12px system-ui, sans-serif', values: function (u, v) { return v.map(short); } }
      ],
      series: series,
      hooks: { draw: [function (u) { labelPoints(u, first); }] }
    }, columns);
    var left = data.runs.length - loadRuns.length;
    add(sec, el('p', 'caption', 'Each point is one run (the mean, where a server has several at the same offered load)' +
      (left > 0 ? '; ' + left + ' run' + (left > 1 ? 's' : '') + ' not about load (fairness, slowdown) are left out' : '') +
      '. A server that sheds load keeps goodput flat at its capacity however much is offered; one that queues everything collapses.'));
  }

  // Labels every point of the series from "first" on with its series and value, beside the
  // point (left of it near the right edge), pushed apart where points meet or are close, on a
  // white ground so the ideal's line does not strike them through.
  function labelPoints(u, first) {
    var ctx = u.ctx, pr = uPlot.pxRatio, line = 15 * pr, gap = 14 * pr;
    var box = u.bbox;
    ctx.save();
    ctx.font = (12 * pr) + 'px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    u.data[0].forEach(function (x, idx) {
      var labels = [];
      for (var s = first; s < u.series.length; s++) {
        var v = u.data[s][idx];
        if (v === null || v === undefined) continue;
        labels.push({ text: u.series[s].label + ' ' + rate(v) + '/s', colour: u.series[s].stroke(u, s),
          y: u.valToPos(v, 'y', true) });
      }
      if (labels.length === 0) return;
      labels.sort(function (a, b) { return a.y - b.y; });
      for (var i = 1; i < labels.length; i++) labels[i].y = Math.max(labels[i].y, labels[i - 1].y + line);
      var over = labels[labels.length - 1].y - (box.top + box.height - line / 2);
      if (over > 0) labels.forEach(function (l) { l.y -= over; });
      var px = u.valToPos(x, 'x', true);
      var wide = Math.max.apply(null, labels.map(function (l) { return ctx.measureText(l.text).width; }));
      var right = px + gap + wide <= box.left + box.width;
      ctx.textAlign = right ? 'left' : 'right';
      labels.forEach(function (l) {
        var w = ctx.measureText(l.text).width, pad = 3 * pr;
        ctx.fillStyle = 'rgba(255, 255, 255, 0.92)';
        ctx.fillRect(right ? px + gap - pad : px - gap - w - pad, l.y - line / 2 + pr, w + 2 * pad, line - 2 * pr);
        ctx.fillStyle = l.colour;
        ctx.fillText(l.text, right ? px + gap : px - gap, l.y);
      });
    });
    ctx.restore();
  }
`;
