/**
 * A panel of a run's card beyond the load generator's own charts: any figures over the run's
 * time (a server's decisions, say), given as columns the card draws as one more chart. The
 * report knows nothing of what they mean; whoever measured them names and formats them.
 *
 * @module
 */

/** One line of a {@link ReportPanel}. */
export interface ReportPanelSeries {
  readonly label: string;
  /** One value per point of the panel's `t`; null where there is nothing to show. */
  readonly values: readonly (number | null)[];
  /** What the legend shows while nothing is hovered: the whole run's figure (`'12.5/s'`). */
  readonly whole: string;
  /** A CSS colour, `#rrggbb`. @default the report's palette, in order */
  readonly colour?: string;
  /** A translucent area under the line, for a level (requests in flight). @default false */
  readonly fill?: boolean;
  /** A dashed line, for a bound (a limit) rather than a measure. @default false */
  readonly dashed?: boolean;
}

/** A chart of figures over the run's time, drawn in the run's card under its own charts. */
export interface ReportPanel {
  /** The chart's heading. */
  readonly title: string;
  /** How values read: a rate (`/s`), a duration (ms) or a count. */
  readonly unit: 'per-second' | 'ms' | 'count';
  /** Each point's end, seconds after the run's start (as the run's own charts). */
  readonly t: readonly number[];
  readonly series: readonly ReportPanelSeries[];
  /** A line under the chart (where the figures come from). */
  readonly caption?: string;
}

/** `panel`, checked: every series has a value per point. Throws naming the panel otherwise. */
export function checkedPanel(panel: ReportPanel): ReportPanel {
  for (const s of panel.series) {
    if (s.values.length !== panel.t.length) {
      throw new Error(
        `report panel '${panel.title}': series '${s.label}' has ${s.values.length} values for ${panel.t.length} points`,
      );
    }
  }
  return panel;
}
