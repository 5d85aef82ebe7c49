import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelayMs } from './backoff';

/** Time as a read pace sees it; tests give a virtual clock. */
export interface PaceClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: PaceClock = { now: Date.now, sleep };

/** Bounds of the back-off between two tries of a throttled read. */
const THROTTLE_BASE_MS = 500;
const THROTTLE_MAX_MS = 5_000;
const THROTTLE_MIN_MS = 100;

export interface ReadPaceOptions {
  /** Read units per second the read may average, one second's worth at once; 0 reads at full speed. */
  unitsPerSecond: number;
  /** How long a read may go without a page coming back and still try a throttled page again; 0 never does. */
  throttleWindowMs: number;
  clock?: PaceClock;
}

/** One list's pages kept to a rate of read units per second (from `ConsumedCapacity`), and its throttle waits. */
export class ReadPace {
  readonly paced: boolean;
  private readonly rate: number;
  private readonly throttleWindowMs: number;
  private readonly clock: PaceClock;
  private readonly start: number;
  private spent = 0;
  private throttles = 0;
  private lastProgress: number;

  constructor(options: ReadPaceOptions) {
    this.paced = options.unitsPerSecond > 0;
    this.rate = options.unitsPerSecond;
    this.throttleWindowMs = options.throttleWindowMs;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.start = this.clock.now();
    this.lastProgress = this.start;
  }

  /**
   * Waits until a page's booking (the most it can cost) fits the rate, then books it; a throttled try stays booked.
   */
  async beforePage(booking: number): Promise<void> {
    if (!this.paced) return;
    const wait = this.start + ((this.spent + booking) / this.rate - 1) * 1000 - this.clock.now();
    this.spent += booking;
    if (wait > 0) await this.clock.sleep(wait);
  }

  /** Replaces a page's booking with the units it consumed; a page that came back is progress. */
  consumed(units: number | undefined, booking: number): void {
    if (this.paced) this.spent += (units ?? booking) - booking;
    this.throttles = 0;
    this.lastProgress = this.clock.now();
  }

  /** Waits before a throttled page is read again; false once that would pass the throttle window. */
  async afterThrottle(): Promise<boolean> {
    this.throttles += 1;
    const delay = THROTTLE_MIN_MS + backoffDelayMs(this.throttles, THROTTLE_BASE_MS, THROTTLE_MAX_MS - THROTTLE_MIN_MS);
    if (this.clock.now() + delay > this.lastProgress + this.throttleWindowMs) return false;
    await this.clock.sleep(delay);
    return true;
  }
}
