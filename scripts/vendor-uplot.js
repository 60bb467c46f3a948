#!/usr/bin/env node
// Run by `npm run build` after tsc: copies uPlot (MIT, a dev dependency) into
// dist/load/report/vendor/uplot/ — its browser build and stylesheet, each headed by its
// licence, and the licence itself — so the package has no runtime dependency and its HTML
// report still inlines the chart library (src/load/report/chart-library.ts reads it there).
import { mkdir, writeFile } from 'node:fs/promises';
import {
  uplotFiles,
  uplotFromPackage,
  vendorDirectory,
} from '../dist/load/report/chart-library.js';

const dir = new URL(`../dist/load/report/${vendorDirectory}`, import.meta.url);
const uplot = await uplotFromPackage();
await mkdir(dir, { recursive: true });
await Promise.all([
  writeFile(new URL(uplotFiles.script, dir), uplot.script),
  writeFile(new URL(uplotFiles.style, dir), uplot.style),
  writeFile(new URL('LICENSE', dir), uplot.licence),
]);
