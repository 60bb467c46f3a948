/**
 * The broker scenario's checks, each with the figures it uses: with the gate, the lag stays
 * within its bound and the consumer does useful work at capacity; without any bound the useful
 * work collapses as the backlog ages; with a TTL alone the broker throws the excess away and
 * the producer never hears of it.
 *
 * @module
 */
import { formatMs } from '../../../load/format-table.js';
import type { Target } from '../records.js';
import type { ModeRecord } from './figures.js';
import { capacityPerSec, lifeMs, maxLag } from './settings.js';

/** The share of capacity the gated consumer must turn into useful work. */
export const gatedUsefulShare = 0.95;
/** Without a bound, the second half's useful work must fall below this share of capacity. */
export const collapsedUsefulShare = 0.1;

const two = (x: number): string => x.toFixed(2);
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
/** A share as the checks print it, to a tenth of a per cent. */
const shown3 = (x: number): number => Math.round(x * 1_000) / 1_000;
/** A fraction as the checks print it, to two places: the check compares what it prints. */
const shown2 = (x: number): number => Math.round(x * 100) / 100;

/** The checks for whichever ways ran. */
export function brokerTargets(records: readonly ModeRecord[]): Target[] {
  const find = (mode: string) => records.find((r) => r.figures.mode === mode);
  const judged = (r: ModeRecord): boolean => r.result.validity.valid;
  const targets: Target[] = [];
  const gated = find('lag-gate');
  if (gated !== undefined) {
    const f = gated.figures;
    const inFlight = gated.run.inFlightAtReading ?? 0;
    const bound = maxLag + inFlight;
    const outstanding = gated.run.maxOutstanding ?? Infinity;
    targets.push({
      name: 'with lagGate, the lag never exceeds maxLag by more than what was in flight at a reading',
      pass: outstanding <= bound,
      // A property of the gate, not of the machine's speed: a miss is judged however busy.
      judged: true,
      detail:
        `at most ${outstanding} messages admitted and not yet processed at any admission, which the broker's lag cannot exceed ` +
        `(≤ maxLag ${maxLag} + ${inFlight} publishes in flight at a reading = ${bound}); the broker read ${f.maxLag ?? '–'} at most, ` +
        `${gated.run.readings ?? 0} readings by the gate`,
    });
    const share = shown2(f.usefulOfCapacity);
    targets.push({
      name: 'with lagGate, the consumer does useful work at capacity and every message is fresh',
      pass: share >= gatedUsefulShare && f.processed === f.useful && f.refused > 0,
      judged: judged(gated),
      detail:
        `useful ${f.usefulPerSec.toFixed(0)}/s = ${two(share)} × capacity ${capacityPerSec.toFixed(0)}/s (≥ ${gatedUsefulShare}), ` +
        `${f.processed - f.useful} of ${f.processed} processed past their ${lifeMs / 1_000} s life (0 expected; age max ${formatMs(f.ageMaxMs)}), ` +
        `the producer heard 'later' ${f.refused} times (retry after p50 ${formatMs(f.retryAfterP50Ms)})`,
    });
  }
  const unbounded = find('fire-and-forget');
  if (unbounded !== undefined) {
    const f = unbounded.figures;
    const lastHalf = shown2(f.usefulOfCapacityLastHalf);
    targets.push({
      name: 'fire-and-forget collapses: the backlog outlives its messages',
      pass: shown3(f.lateShare) > 0.5 && lastHalf <= collapsedUsefulShare,
      judged: judged(unbounded),
      detail:
        `${pct(f.lateShare)} of processed messages past their life (> 50 %), useful over the second half ${two(lastHalf)} × capacity (≤ ${collapsedUsefulShare}), ` +
        `lag up to ${f.maxLag ?? '–'}, ${f.left} messages left unprocessed, age at processing up to ${formatMs(f.ageMaxMs)}`,
    });
  }
  const ttl = find('ttl');
  if (ttl !== undefined) {
    const f = ttl.figures;
    const dropped = f.published === 0 ? 0 : f.expired / f.published;
    targets.push({
      name: 'a TTL alone: the broker drops the dead work, and the producer never hears of it',
      pass: shown3(dropped) >= 0.25 && f.refused === 0,
      judged: judged(ttl),
      detail:
        `${f.expired} of ${f.published} published messages expired in the broker (${pct(dropped)}, ≥ 25 %), the producer refused ${f.refused} times (0 expected: nothing tells it), ` +
        `useful ${two(shown2(f.usefulOfCapacity))} × capacity, age at processing p50 ${formatMs(f.ageP50Ms)} of a ${lifeMs / 1_000} s life`,
    });
  }
  return targets;
}
