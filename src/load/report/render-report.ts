/**
 * The HTML report: one self-contained file (uPlot's code and styles inlined with its licence,
 * the data embedded as JSON) that opens offline in any browser. Takes several labelled runs at
 * once, so a demo can hand over every scenario against every server in one call.
 *
 * @module
 */
import { writeFile } from 'node:fs/promises';
import { chartLibrary } from './chart-library.js';
import { reportData, type ReportOptions } from './report-data.js';
import { reportScript } from './report-script.js';
import { reportStyle } from './report-style.js';

/** Text that cannot close the element it is embedded in. */
function inline(text: string): string {
  return text.replace(/<\/(script|style)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * Renders the report as one HTML string.
 *
 * @example
 * ```ts
 * const html = await renderReport({ title: 'naive vs bounded', runs: [naive, bounded], capacityPerSec: 333 });
 * ```
 */
export async function renderReport(options: ReportOptions): Promise<string> {
  const data = reportData(options);
  const lib = await chartLibrary();
  // JSON inside <script type="application/json">: only "<" needs escaping.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="spillway load">
<title>${escapeHtml(data.title)}</title>
<style>${inline(lib.style)}</style>
<style>${inline(reportStyle)}</style>
</head>
<body>
<main id="report"></main>
<noscript><p style="padding:24px">This report draws its tables and charts with JavaScript; the raw data is in the page source.</p></noscript>
<script type="application/json" id="report-data">${json}</script>
<script>${inline(lib.script)}</script>
<script>${inline(reportScript)}</script>
</body>
</html>
`;
}

/** Renders the report and writes it to `file`. */
export async function writeReport(file: string, options: ReportOptions): Promise<void> {
  await writeFile(file, await renderReport(options));
}
