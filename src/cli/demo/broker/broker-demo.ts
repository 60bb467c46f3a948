/**
 * `spillway demo --scenarios broker`: a producer offering three times what its consumer can
 * process, through a real broker, three ways — fire-and-forget, through a `lagGate`, and with a
 * TTL alone — then the table, the checks and the HTML report. Each way gets a stream or queue
 * of its own, deleted after it, and on Ctrl-C before the process ends.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { CommandFailure, UsageError } from '../../command.js';
import { exitCodeOf } from '../records.js';
import { amqpPort } from './amqp-port.js';
import { maskedUrl, type BrokerLine, type BrokerPort } from './broker-port.js';
import { writeBrokerReport } from './broker-report.js';
import { brokerJson, brokerTitle, formatBrokerSummary } from './broker-table.js';
import { brokerTargets } from './broker-targets.js';
import { figuresOf, type ModeRecord } from './figures.js';
import { modeResult } from './mode-result.js';
import { natsPort } from './nats-port.js';
import { redisPort } from './redis-port.js';
import { runMode } from './run-mode.js';
import {
  brokerNames,
  defaultBrokerUrls,
  defaultDurationMs,
  maxDurationMs,
  minDurationMs,
  modes,
  quickDurationMs,
  type BrokerName,
} from './settings.js';

/** The broker scenario's command-line choices, as given. */
export interface BrokerDemoOptions {
  readonly broker: string | undefined;
  readonly url: string | undefined;
  readonly seconds: string | undefined;
  readonly quick: boolean;
  readonly json: boolean;
  /** Where to write the HTML report; undefined: no report. */
  readonly report: string | undefined;
  readonly log: (line: string) => void;
}

const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type StopSignal = (typeof stopSignals)[number];

/** Checks the choices; throws `UsageError` naming the option. */
export function brokerChoices(o: Pick<BrokerDemoOptions, 'broker' | 'url' | 'seconds' | 'quick'>): {
  readonly broker: BrokerName;
  readonly url: string;
  readonly durationMs: number;
} {
  const broker = (o.broker ?? 'nats') as BrokerName;
  if (!brokerNames.includes(broker)) {
    throw new UsageError(`--broker must be one of ${brokerNames.join(', ')}, got '${o.broker}'`);
  }
  const url = o.url ?? defaultBrokerUrls[broker];
  const scheme =
    broker === 'amqp'
      ? /^amqps?:\/\/\S+$/
      : broker === 'redis'
        ? /^rediss?:\/\/\S+$/
        : /^nats:\/\/\S+$/;
  if (!scheme.test(url)) {
    throw new UsageError(
      `--broker-url for ${broker} must look like ${defaultBrokerUrls[broker]}, got '${url}'`,
    );
  }
  let durationMs = o.quick ? quickDurationMs : defaultDurationMs;
  if (o.seconds !== undefined) {
    const seconds = Number(o.seconds);
    durationMs = seconds * 1_000;
    if (!Number.isFinite(seconds) || durationMs < minDurationMs || durationMs > maxDurationMs) {
      throw new UsageError(
        `--broker-seconds must be a number from ${minDurationMs / 1_000} to ${maxDurationMs / 1_000}, got '${o.seconds}'`,
      );
    }
  }
  return { broker, url, durationMs };
}

function openPort(broker: BrokerName, url: string): Promise<BrokerPort> {
  if (broker === 'amqp') return amqpPort(url);
  if (broker === 'redis') return redisPort(url);
  return natsPort(url);
}

/** Runs the scenario; resolves to the exit code. */
export async function runBrokerDemo(o: BrokerDemoOptions): Promise<number> {
  const { broker, url, durationMs } = brokerChoices(o);
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const onSignal = (signal: StopSignal): void => {
    if (stoppedBy !== undefined) {
      // A second one: the user will not wait for the broker (one that hangs, say).
      o.log(`${signal} again: ending now; the streams or queues above may be left behind.`);
      for (const s of stopSignals) process.off(s, onSignal);
      process.kill(process.pid, signal);
      return;
    }
    stoppedBy = signal;
    o.log(`\n${signal}: stopping, and deleting what this run made in the broker …`);
    controller.abort();
  };
  for (const s of stopSignals) process.on(s, onSignal);
  const lines = new Set<BrokerLine>();
  const records: ModeRecord[] = [];
  let port: BrokerPort | undefined;
  try {
    try {
      port = await openPort(broker, url);
    } catch (error) {
      throw new CommandFailure(
        `the broker scenario cannot use ${broker} at ${maskedUrl(url)}: ${(error as Error).message}`,
      );
    }
    const runId = `spillway-demo-${process.pid}-${randomBytes(3).toString('hex')}`;
    o.log(brokerTitle(broker, port.url, durationMs));
    for (const mode of modes) {
      if (controller.signal.aborted) break;
      o.log(`\n${mode}: ${durationMs / 1_000} s …`);
      const run = await runMode({
        port,
        mode,
        name: `${runId}-${mode}`,
        durationMs,
        signal: controller.signal,
        lines,
        log: o.log,
      });
      const result = modeResult(run, broker);
      const figures = figuresOf(run, result);
      records.push({ run, result, figures });
      o.log(
        `  useful ${figures.usefulOfCapacity.toFixed(2)} × capacity, age p50 ${Math.round(figures.ageP50Ms ?? 0)} ms, ` +
          `max lag ${figures.maxLag ?? '–'}, refused ${figures.refused}, expired ${figures.expired}` +
          (result.validity.valid ? '' : `  [not valid: ${result.validity.reasons.join('; ')}]`),
      );
    }
  } finally {
    for (const line of lines) await line.delete();
    await port?.close();
    for (const s of stopSignals) process.off(s, onSignal);
  }
  if (stoppedBy !== undefined) {
    o.log('deleted; stopped before the end, so nothing is judged.');
    // End as a process killed by that signal would: a shell's loop stops on Ctrl-C.
    process.kill(process.pid, stoppedBy);
    return 130;
  }
  const targets = brokerTargets(records);
  const title = brokerTitle(broker, port?.url ?? url, durationMs);
  if (o.json) {
    process.stdout.write(`${JSON.stringify(brokerJson(broker, records, targets), null, 2)}\n`);
  } else {
    process.stdout.write(`${formatBrokerSummary(records, targets, title)}\n`);
  }
  if (o.report !== undefined) {
    await writeBrokerReport(o.report, { broker, title, records, targets });
    o.log(`\nreport: ${o.report}`);
  }
  const code = exitCodeOf(targets);
  if (code !== 0) o.log('\nA target was missed on valid runs (✗ above): exit code 1.');
  return code;
}
