import { backoffDelayMs, sleep } from './backoff';
import type { ScanPace } from './inventory-table';

/** Time as a read pace sees it; tests give a virtual clock. */
export interface PaceClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const SYSTEM_CLOCK: PaceClock = { now: Date.now, sleep };

/**
 * Read units a strongly consistent Scan page may cost (1 MB, 4 KB a unit, plus the item that crosses the limit):
 * booked before the page is sent, corrected when it comes back.
 */
export const PAGE_UNITS = 257;

/** Bounds of the back-off between two tries of a throttled read. */
const THROTTLE_BASE_MS = 500;
const THROTTLE_MAX_MS = 5_000;
const THROTTLE_MIN_MS = 100;

/**
 * One read of a table (a list's Scan, all its segments together) kept to a rate of read units per second, counted
 * from the `ConsumedCapacity` DynamoDB returns with each page, as AWS advises for a large Scan against a table's
 * capacity; and the waits before a throttled page is read again, within a window from the read's start.
 */
export class ReadPace implements ScanPace {
  readonly paced: boolean;
  private readonly rate: number;
  private readonly throttleWindowMs: number;
  private readonly clock: PaceClock;
  private readonly start: number;
  private spent = 0;
  private throttles = 0;

  /**
   * @param unitsPerSecond read units per second the read may average, with one second's worth (pages in flight
   *   included) at once; 0 reads at full speed
   * @param throttleWindowMs how long after the read's start a throttled page may still be read again
   */
  constructor(unitsPerSecond: number, throttleWindowMs: number, clock: PaceClock = SYSTEM_CLOCK) {
    this.paced = unitsPerSecond > 0;
    this.rate = unitsPerSecond;
    this.throttleWindowMs = throttleWindowMs;
    this.clock = clock;
    this.start = clock.now();
  }

  /**
   * Waits until the units so far and this page's booking fit the rate (one second's worth at once), then books it:
   * segments waiting on one pace never send together more than the rate allows. A throttled try stays booked,
   * which slows the read after a throttle.
   */
  async beforePage(): Promise<void> {
    if (!this.paced) return;
    const wait = this.start + ((this.spent + PAGE_UNITS) / this.rate - 1) * 1000 - this.clock.now();
    this.spent += PAGE_UNITS;
    if (wait > 0) await this.clock.sleep(wait);
  }

  /** Replaces a page's booking with the read units it consumed. */
  consumed(units: number | undefined): void {
    this.spent += (units ?? PAGE_UNITS) - PAGE_UNITS;
  }

  /** Waits before a throttled page is read again; false, without waiting, once the window would be passed. */
  async afterThrottle(): Promise<boolean> {
    this.throttles += 1;
    const delay = THROTTLE_MIN_MS + backoffDelayMs(this.throttles, THROTTLE_BASE_MS, THROTTLE_MAX_MS - THROTTLE_MIN_MS);
    if (this.clock.now() + delay > this.start + this.throttleWindowMs) return false;
    await this.clock.sleep(delay);
    return true;
  }
}
