// Summary statistics the client benchmarks share.

/** The arithmetic mean of `xs` (an array or a typed array). */
export function mean(xs) {
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** The median of `xs`; `xs` itself is left as it was. */
export function median(xs) {
  const s = Float64Array.from(xs).sort();
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The mean of `xs` without its largest `share` (e.g. 0.01 leaves the top 1 % out). */
export function trimmedMean(xs, share) {
  const s = Float64Array.from(xs).sort();
  return mean(s.subarray(0, Math.ceil(s.length * (1 - share))));
}

/** Shuffles `xs` in place (Fisher–Yates) with `random`, uniform in [0, 1); returns `xs`. */
export function shuffle(xs, random) {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}
