/**
 * uPlot (MIT), the chart library the HTML report inlines. Spillway has no runtime dependencies:
 * the build copies uPlot's browser build and stylesheet from the dev dependency into
 * `vendor/uplot/` beside this module (scripts/vendor-uplot.js), each file headed by uPlot's
 * licence, so an installed package writes its report with nothing else installed and the
 * report opens offline. Run from the sources (tests), where there is no build, the same files
 * come from the dev dependency, with the same header.
 *
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** uPlot's files the report inlines, as named in its package and in `vendor/uplot/`. */
export const uplotFiles = { script: 'uPlot.iife.min.js', style: 'uPlot.min.css' } as const;

/** Where the build puts uPlot, relative to this module. */
export const vendorDirectory = 'vendor/uplot/';

/** The chart library's code and styles, each starting with uPlot's licence. */
export interface ChartLibrary {
  readonly script: string;
  readonly style: string;
}

/**
 * uPlot's files from the installed package (the dev dependency), each headed by its licence,
 * and the licence itself. Throws when uPlot is not installed.
 */
export async function uplotFromPackage(): Promise<ChartLibrary & { readonly licence: string }> {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('uplot/package.json'));
  const read = (file: string): Promise<string> => readFile(join(dir, file), 'utf8');
  const [manifest, licence, script, style] = await Promise.all([
    read('package.json'),
    read('LICENSE'),
    read(join('dist', uplotFiles.script)),
    read(join('dist', uplotFiles.style)),
  ]);
  const { version } = JSON.parse(manifest) as { version: string };
  // The MIT licence asks that its notice go with every copy: the report is one.
  const header = `/*! uPlot ${version}\n${licence.trim().replaceAll('*/', '* /')}\n*/\n`;
  return { script: header + script, style: header + style, licence };
}

/** The copy the build vendored, or, from the sources, the dev dependency. */
export async function chartLibrary(): Promise<ChartLibrary> {
  const dir = new URL(vendorDirectory, import.meta.url);
  try {
    const [script, style] = await Promise.all([
      readFile(new URL(uplotFiles.script, dir), 'utf8'),
      readFile(new URL(uplotFiles.style, dir), 'utf8'),
    ]);
    return { script, style };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    return await uplotFromPackage();
  } catch {
    throw new Error(
      `uPlot is missing: ${dir.pathname} was not built (run \`npm run build\`), and the uplot dev dependency is not installed`,
    );
  }
}
