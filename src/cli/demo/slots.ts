/**
 * The slots scenario's verdict and its column in the table (isolation of capacity): a tenant
 * within its rate quota whose requests hold slots long, next to polite clients — on the bare
 * bulkhead and on Spillway without shares, where it takes the slots, and on Spillway with
 * `tenantShare`, where it holds its share and the polite clients get through.
 *
 * @module
 */
import type { GroupStats } from '../../load/index.js';
import type { RunRecord, Target } from './records.js';
import { slotsSetup } from './scenarios.js';

/** The bounded servers' slots (the pool's 10 connections). */
const routeSlots = 10;

/** The holder's share in slots, as the guard counts it: at least one. */
export const holderShareSlots = Math.max(1, Math.floor(slotsSetup.maxShare * routeSlots));

/** The column's heading. */
const heading = 'holder slots (peak)';

/** Adds the holder's peak slots to the first row of each run (`rows[0]` is the heading). */
export function addHolderColumn(rows: string[][], runs: readonly RunRecord[]): void {
  rows[0]!.push(heading);
  let row = 1;
  for (const r of runs) {
    for (let i = 0; i < r.result.groups.length; i++) {
      rows[row++]!.push(i === 0 ? String(r.holderPeakSlots ?? '–') : '');
    }
  }
}

/** The polite clients' ok share in per cent, to the one decimal it is printed with. */
function politeShare(r: RunRecord): number | undefined {
  const polite = r.result.groups.find((g: GroupStats) => g.name === 'polite');
  if (polite === undefined || polite.sent === 0) return undefined;
  return Math.round((polite.ok / polite.sent) * 1_000) / 10;
}

/**
 * With shares on, the polite clients keep ≥ 99 % and the holder never holds more than its
 * share (by the server's own count). The runs without shares are printed beside it — what the
 * same load does to a server that lets one tenant take the slots — and do not decide it.
 */
export function slotsTarget(records: readonly RunRecord[]): Target | undefined {
  const runs = records.filter((r) => r.scenario.id === 'slots');
  const shared = runs.find((r) => r.server === 'shares');
  const share = shared === undefined ? undefined : politeShare(shared);
  if (shared === undefined || share === undefined) return undefined;
  const holder = shared.result.groups.find((g) => g.name === slotsSetup.holder);
  const peak = shared.holderPeakSlots;
  const without = runs
    .filter((r) => r !== shared)
    .map(
      (r) =>
        `${r.server} ${politeShare(r)?.toFixed(1) ?? '–'} % (holder at ${r.holderPeakSlots ?? '–'} slots)`,
    );
  return {
    name: 'a tenant holding slots long is held to its share; polite clients get through',
    pass: share >= 99 && peak !== undefined && peak <= holderShareSlots,
    judged: shared.result.validity.valid,
    detail:
      `polite ok ${share.toFixed(1)} % (≥ 99 %), holder at most ${peak ?? '–'} slots at once ` +
      `(≤ its share, ${holderShareSlots} of ${routeSlots}), holder ok ${holder?.ok ?? 0} of ${holder?.sent ?? 0}` +
      (without.length === 0 ? '' : `; without shares, polite ok: ${without.join(', ')}`),
  };
}
