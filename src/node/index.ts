/**
 * Spillway for `node:http` servers. So far: the event-loop overload signal.
 *
 * @module
 */
export {
  eventLoopMonitor,
  type EventLoopMonitor,
  type EventLoopMonitorOptions,
  type EventLoopSample,
} from './event-loop-monitor.js';
