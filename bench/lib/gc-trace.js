// V8's --trace-gc-nvp output, read one line at a time (bench/diagnostics/redis-scavenges.js,
// bench/diagnostics/executor-closures.js).

/**
 * A scavenge's pause (ms), bytes allocated since the collection before and bytes that survived
 * it, from one --trace-gc-nvp line (`name=value` pairs to Node 24, a JSON object from Node 25);
 * undefined for any other line.
 */
export function scavengeOf(line) {
  const json = line.indexOf('GC: {');
  if (json >= 0) {
    const gc = JSON.parse(line.slice(json + 4));
    if (gc.gc !== 's') return undefined;
    return { pauseMs: gc.pause, allocated: gc.allocated, survived: gc.new_space_survived };
  }
  if (!line.includes(' gc=s ')) return undefined;
  const field = (name) => Number(new RegExp(` ${name}=([0-9.]+)`).exec(line)?.[1]);
  return {
    pauseMs: field('pause'),
    allocated: field('allocated'),
    survived: field('new_space_survived'),
  };
}
