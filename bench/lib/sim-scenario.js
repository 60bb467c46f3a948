// A whole scenario of `spillway/sim` as `spillway sim --scenario NAME` runs it (every run it
// makes), shared by bench/sim.js and the fresh process it starts for a scenario's cold run.

/**
 * Runs scenario `name` (`chain` or `spike`) of `lib` (the built `spillway/sim`) once, its
 * requests counted from its rows: the chain's attempts per user action at A, B and C times the
 * actions (rounded to 4 places in the rows: within a few requests), the spike's one request an
 * action.
 */
export async function wholeScenario(lib, name) {
  if (name === 'chain') {
    const r = await lib.chainScenario({ seed: 1 });
    const rows = [...r.refusing, ...r.overloaded];
    const requests = rows.reduce(
      (n, x) => n + Math.round((x.attemptsAtA + x.attemptsAtB + x.attemptsAtC) * x.actions),
      0,
    );
    return { requests, actions: rows.reduce((n, x) => n + x.actions, 0), events: Number.NaN };
  }
  const r = await lib.spikeScenario({ seed: 1 });
  const actions = r.rows.reduce((n, x) => n + x.actions, 0);
  return { requests: actions, actions, events: Number.NaN };
}
