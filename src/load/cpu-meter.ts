/**
 * The generator's own CPU over the measured part of a run (the warm-up excluded), and when
 * that part started: a generator that needs most of a core cannot keep its schedule, so the
 * figure goes into the run's validity.
 *
 * @module
 */

export class CpuMeter {
  #cpu0: NodeJS.CpuUsage = { user: 0, system: 0 };
  #startedAt = '';
  #percent = 0;

  /** Wall-clock start of the measured part, ISO 8601 (empty until {@link start}). */
  get startedAt(): string {
    return this.#startedAt;
  }

  /** CPU while measuring, percent of one core (0 until {@link stop}). */
  get percent(): number {
    return this.#percent;
  }

  /** The measured part starts now. */
  start(): void {
    this.#startedAt = new Date().toISOString();
    this.#cpu0 = process.cpuUsage();
  }

  /** The measured part ended after `wallMs` of it. */
  stop(wallMs: number): void {
    const cpu = process.cpuUsage(this.#cpu0);
    this.#percent = ((cpu.user + cpu.system) / 1000 / Math.max(wallMs, 1)) * 100;
  }
}
