/**
 * How an attempt ends: its verdict recorded, once, with every part it went through — the retry
 * budget, the breaker, the throttle — and its place under the cap freed, whatever those parts
 * throw (a breaker or budget passed in is user code). The columns of the table under
 * {@link Verdict}, applied.
 *
 * @module
 */
import type { PermitOutcome } from '../index.js';
import type { Attempt, Verdict } from './records.js';
import type { Settings } from './settings.js';

/** How the cap is told an attempt ended, by verdict (adaptive limits learn from it). */
export const capOutcomes: Readonly<Record<Verdict, PermitOutcome>> = {
  ok: 'ok',
  refused: 'dropped',
  'bad-answer': 'dropped',
  error: 'ignored',
  failed: 'dropped',
  local: 'ignored',
  caller: 'ignored',
};

/** Records how `attempt` ended with the parts of `s`, then frees what it held. */
export function endAttempt(s: Settings, attempt: Attempt<unknown>, verdict: Verdict): void {
  try {
    const call = attempt.call;
    call.lastVerdict = verdict;
    if (!call.requested && verdict !== 'caller') {
      call.requested = true;
      s.budget.recordRequest();
    }
    const breaker = s.breakerGate;
    if (verdict === 'local' || verdict === 'caller') {
      breaker?.leave(attempt, 'ignore', Number.NaN);
      return;
    }
    // One reading for the records of the parts built here.
    const now = s.recordsAtNow ? s.clock.now() : Number.NaN;
    // The dependency turned the request away: it refused, timed out or was not reached.
    const refused = verdict === 'failed' || verdict === 'refused';
    breaker?.leave(
      attempt,
      verdict === 'ok' ? 'success' : verdict === 'refused' ? 'ignore' : 'failure',
      now,
    );
    if (verdict === 'ok') s.budget.recordSuccess();
    else if (refused) s.budget.recordFailure();
    s.throttleGate?.leave(call, !refused, now);
  } finally {
    attempt.scope.dispose();
    free(s, attempt, verdict);
  }
}

/** Frees the attempt's place under the cap, once. */
function free(s: Settings, attempt: Attempt<unknown>, verdict: Verdict): void {
  if (attempt.slot) {
    attempt.slot = false;
    s.limiter.releaseSlot(capOutcomes[verdict]);
  } else {
    const permit = attempt.permit;
    attempt.permit = undefined;
    permit?.release(capOutcomes[verdict]);
  }
}
