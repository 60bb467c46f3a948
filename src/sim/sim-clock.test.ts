import { describe, expect, it } from 'vitest';
import type { TimerHandle } from '../index.js';
import { SimClock, SimEventsFullError } from './sim-clock.js';
import { forkRandom } from './random.js';

describe('SimClock', () => {
  it('fires in due order, ties in the order set, and drains promise callbacks between', async () => {
    const clock = new SimClock(100);
    const seen: string[] = [];
    clock.setTimer(20, () => seen.push('b@20'));
    clock.setTimer(10, () => {
      seen.push('a@10');
      // A callback of this event runs before the next event, at this event's time.
      void Promise.resolve().then(() => {
        seen.push(`then@${clock.now()}`);
        clock.setTimer(10, () => seen.push('c@20'));
      });
    });
    await clock.run(100);
    expect(seen).toEqual(['a@10', 'then@10', 'b@20', 'c@20']);
    expect(clock.now()).toBe(100);
    expect(clock.pending).toBe(0);
  });

  it('fires own timers one after another, and drains after one that touched promise code', async () => {
    const clock = new SimClock(100);
    const seen: string[] = [];
    const later = (label: string) => () =>
      void Promise.resolve().then(() => seen.push(`${label}@${clock.now()}`));
    // Untouched (a missed touch): its promise callback runs late, at the next drain.
    clock.setOwnTimer(10, later('own'));
    clock.setOwnTimer(20, () => seen.push('b@20'));
    clock.setOwnTimer(30, () => {
      clock.touch();
      later('touched')();
    });
    clock.setOwnTimer(40, () => seen.push('c@40'));
    // Through the Clock interface (a real primitive's timer): always drained after.
    clock.setTimer(50, later('primitive'));
    clock.setOwnTimer(60, () => seen.push('d@60'));
    await clock.run(100);
    expect(seen).toEqual(['b@20', 'own@30', 'touched@30', 'c@40', 'primitive@50', 'd@60']);
  });

  it("a queue's timers fire in exactly the order plain timers would, cleared or not", async () => {
    // The same random schedule of sets and clears, once with every timer plain and once with the
    // fixed-duration ones in queues: the firing order must not differ in a single place.
    const trace = async (useQueues: boolean): Promise<string[]> => {
      const clock = new SimClock(10_000);
      const random = forkRandom(7, 0);
      const durations = [5, 12.5, 40];
      const queues = durations.map((ms) => clock.queue(ms));
      const live: TimerHandle[] = [];
      const fired: string[] = [];
      let id = 0;
      const act = (): void => {
        for (let k = 0; k < 3; k++) {
          const r = random();
          // Kept to a few hundred pending: each firing sets up to three more.
          if ((r < 0.15 || clock.pending > 300) && live.length > 0) {
            // Clear one at random: a head, a middle or a tail of a queue, or a plain timer.
            clock.clearTimer(live.splice(Math.floor(random() * live.length), 1)[0]!);
            continue;
          }
          const name = `t${id++}`;
          const fn = (): void => {
            fired.push(`${name}@${clock.now()}`);
            act();
          };
          const q = Math.floor(random() * 4);
          if (q === 3) live.push(clock.setTimer(Math.floor(random() * 30), fn));
          else if (useQueues) live.push(queues[q]!.set(fn));
          else live.push(clock.setTimer(durations[q]!, fn));
        }
        if (live.length > 200) live.splice(0, 100);
      };
      clock.setTimer(0, act);
      await clock.run(2_000);
      return fired;
    };
    const plain = await trace(false);
    expect(plain.length).toBeGreaterThan(1_000);
    expect(await trace(true)).toEqual(plain);
  });

  it('counts queued timers against maxEvents, and frees their room when cleared', async () => {
    const clock = new SimClock(3);
    const q = clock.queue(10);
    const fired: string[] = [];
    const a = q.set(() => fired.push('a'));
    q.set(() => fired.push('b'));
    const c = q.set(() => fired.push('c'));
    expect(clock.pending).toBe(3);
    clock.clearTimer(c); // the tail
    clock.clearTimer(a); // the head: the next takes its place in the event list
    clock.clearTimer(a); // twice is nothing
    expect(clock.pending).toBe(1);
    q.set(() => fired.push('d'));
    clock.setTimer(1, () => fired.push('e'));
    expect(clock.pending).toBe(3);
    await clock.run(100);
    expect(fired).toEqual(['e', 'b', 'd']);

    const full = new SimClock(1);
    full.queue(5).set(() => {});
    expect(() => full.queue(5).set(() => {})).toThrow(SimEventsFullError);
  });

  it('a queue emptied and filled again goes on firing', async () => {
    const clock = new SimClock(10);
    const q = clock.queue(10);
    const fired: string[] = [];
    q.set(() => {
      fired.push(`a@${clock.now()}`);
      q.set(() => fired.push(`b@${clock.now()}`));
    });
    const gone = q.set(() => fired.push('never'));
    clock.clearTimer(gone);
    await clock.run(100);
    expect(fired).toEqual(['a@10', 'b@20']);
  });
});
