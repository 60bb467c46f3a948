/**
 * The report page's stylesheet: quiet colours, tabular numbers, cards that read on a laptop
 * and print on paper.
 *
 * @module
 */
export const reportStyle = `
:root { color-scheme: light; --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --bg: #f8fafc; --card: #fff; --warn: #fffbeb; --warn-line: #f59e0b; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
#report { max-width: 1280px; margin: 0 auto; padding: 28px 24px 48px; }
header h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
header .subtitle { font-size: 15px; margin: 0 0 6px; color: #334155; }
header .meta { color: var(--muted); font-size: 12.5px; margin: 0 0 10px; }
header .note { max-width: 900px; color: #334155; margin: 6px 0; }
h2 { font-size: 18px; margin: 0 0 12px; }
h3 { font-size: 16px; margin: 0; }
h4 { font-size: 12.5px; font-weight: 600; color: var(--muted); margin: 14px 0 4px; text-transform: uppercase; letter-spacing: 0.04em; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 18px 20px; margin: 18px 0; box-shadow: 0 1px 2px rgba(15, 23, 42, 0.04); }
.warning { background: var(--warn); border: 1px solid var(--warn-line); border-left-width: 5px; border-radius: 10px; padding: 12px 16px; margin: 18px 0; }
.warning ul { margin: 6px 0 0; padding-left: 20px; }
.scroll { overflow-x: auto; }
table.summary { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; font-size: 12.5px; }
table.summary th { text-align: right; vertical-align: bottom; font-weight: 600; color: #334155; padding: 6px 7px; border-bottom: 2px solid var(--line); }
table.summary td { text-align: right; padding: 6px 7px; border-bottom: 1px solid var(--line); white-space: nowrap; }
table.summary .text { text-align: left; white-space: normal; }
table.summary td.text { min-width: 110px; }
table.summary tr.run td { border-bottom: none; }
table.summary tr.details td { color: #475569; font-size: 11.5px; padding-top: 0; }
table.summary tr.details span { display: inline-block; margin-right: 14px; white-space: nowrap; }
table.summary tr.details .bad { color: #92400e; font-weight: 600; }
table.summary .key { font-weight: 600; }
table.summary tr.run td:first-child { font-weight: 600; }
table.summary tr.group td { color: #475569; font-size: 12.5px; }
table.summary tr.group td:first-child { padding-left: 26px; }
table.summary td.zero { color: #cbd5e1; }
table.summary tr.invalid td { background: var(--warn); }
.caption { color: var(--muted); font-size: 12.5px; margin: 10px 0 0; }
.scenario > h2 { margin: 30px 0 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 18px; }
.grid .card { margin: 12px 0 0; min-width: 0; }
.grid.single { grid-template-columns: 1fr; }
.run-head { display: flex; align-items: center; justify-content: space-between; gap: 12px; }
.badge { font-size: 11.5px; font-weight: 600; border-radius: 999px; padding: 2px 10px; }
.badge.ok { background: #dcfce7; color: #166534; }
.badge.bad { background: #fef3c7; color: #92400e; }
.card.invalid { border-color: var(--warn-line); }
.kpis { display: grid; grid-template-columns: repeat(4, 1fr); gap: 10px; margin: 12px 0 4px; }
.kpi { background: var(--bg); border-radius: 8px; padding: 8px 10px; }
.kpi.lead { background: #eff6ff; box-shadow: inset 3px 0 0 #2563eb; }
.kpi-label { display: block; font-size: 11.5px; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
.kpi-value { display: block; font-size: 17px; font-weight: 650; font-variant-numeric: tabular-nums; white-space: nowrap; }
.kpi-sub { display: block; font-size: 11.5px; color: var(--muted); min-height: 1.2em; white-space: nowrap; }
.detail { color: var(--muted); font-size: 12px; margin: 6px 0 0; overflow-wrap: anywhere; }
.why { color: #92400e; font-size: 12.5px; margin: 10px 0 0; }
.chart { width: 100%; min-height: 40px; }
.empty { color: var(--muted); font-style: italic; }
.uplot { width: 100%; }
.u-legend { font-size: 12px; text-align: left; }
.u-legend .u-marker { width: 10px; height: 10px; border-radius: 2px; }
@media (max-width: 1100px) {
  #report { padding: 20px 14px 40px; }
  .card { padding: 14px; }
  table.summary { font-size: 12px; }
  table.summary td, table.summary th { white-space: normal; padding: 5px 3px; }
  table.summary td.text { min-width: 80px; }
}
@media print { body { background: #fff; } .card { box-shadow: none; break-inside: avoid; } }
`;
