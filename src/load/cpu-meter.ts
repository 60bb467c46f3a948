/**
 * The generator's own CPU over the measured part of a run (the warm-up excluded), the share of
 * the whole machine's CPU time that sat idle meanwhile, and when that part started: a
 * generator that needs most of a core cannot keep its schedule, and one that falls behind
 * while both it and the machine were mostly idle was held up by bursts of its own work, not
 * by a busy machine — so both figures go into the run's validity.
 *
 * @module
 */
import { cpus } from 'node:os';

/** Idle and total CPU time of every core, in ms, from the kernel's counters, and the cores. */
function machineTimes(): { readonly idle: number; readonly total: number; readonly cores: number } {
  let idle = 0;
  let total = 0;
  const all = cpus(); // reads /proc: 0.1–1.4 ms here, so once per sample
  for (const { times } of all) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total, cores: all.length };
}

export class CpuMeter {
  #cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  #machine0 = { idle: 0, total: 0, cores: 1 };
  #startedAt = '';
  #percent = 0;
  #machineIdlePercent: number | undefined;
  #last = { idle: 0, total: 0, cores: 1 };
  #leastIdlePercent: number | undefined;
  #measuring = false;

  /** Wall-clock start of the measured part, ISO 8601 (empty until {@link start}). */
  get startedAt(): string {
    return this.#startedAt;
  }

  /** CPU while measuring, percent of one core (0 until {@link stop}). */
  get percent(): number {
    return this.#percent;
  }

  /**
   * Idle share of all cores' time while measuring, percent; undefined until {@link stop}, or
   * where the platform gives no per-core times.
   */
  get machineIdlePercent(): number | undefined {
    return this.#machineIdlePercent;
  }

  /**
   * The idle share of the machine's busiest stretch between two {@link sample} calls (one a
   * second while measuring), percent: an average over the run hides a neighbour busy in bursts.
   */
  get leastIdlePercent(): number | undefined {
    return this.#leastIdlePercent;
  }

  /** The measured part starts now. */
  start(): void {
    this.#startedAt = new Date().toISOString();
    this.#cpu0 = process.cpuUsage();
    this.#machine0 = machineTimes();
    this.#last = this.#machine0;
    this.#leastIdlePercent = undefined;
    this.#measuring = true;
  }

  /** Closes a stretch (a measurement window); ignored unless measuring. */
  sample(): void {
    if (!this.#measuring) return;
    const now = machineTimes();
    const total = now.total - this.#last.total;
    // The kernel's counters tick every 10 ms: a stretch much shorter than a second says little.
    if (total < 100 * now.cores) return;
    const idle = ((now.idle - this.#last.idle) / total) * 100;
    this.#last = now;
    if (this.#leastIdlePercent === undefined || idle < this.#leastIdlePercent) {
      this.#leastIdlePercent = idle;
    }
  }

  /** The measured part ended after `wallMs` of it. */
  stop(wallMs: number): void {
    const cpu = process.cpuUsage(this.#cpu0);
    this.#percent = ((cpu.user + cpu.system) / 1000 / Math.max(wallMs, 1)) * 100;
    this.sample();
    this.#measuring = false;
    const machine = machineTimes();
    const total = machine.total - this.#machine0.total;
    this.#machineIdlePercent =
      total > 0 ? ((machine.idle - this.#machine0.idle) / total) * 100 : undefined;
  }
}
