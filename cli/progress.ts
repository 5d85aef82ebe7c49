import type { OutputStream } from './io';

const REDRAW_MS = 100;

/** Renders one progress line, e.g. `[########------------]  40%  12000/30000 rows  9500 rows/s`. */
export function renderProgress(done: number, total: number, elapsedMs: number, width: number): string {
  const fraction = total === 0 ? 1 : Math.min(1, done / total);
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  const rate = elapsedMs > 0 ? Math.round((done * 1000) / elapsedMs) : 0;
  const counts = `${done}/${total} rows  ${rate} rows/s`;
  const barWidth = Math.max(10, Math.min(40, width - counts.length - percent.length - 6));
  const filled = Math.round(fraction * barWidth);
  return `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${percent}  ${counts}`;
}

/** A progress bar redrawn in place at most every 100 ms on a terminal; nothing on logs and pipes. */
export function createProgress(
  stream: OutputStream,
  total: number,
  now: () => number = Date.now,
): { update(done: number): void; finish(): void } {
  if (!stream.isTTY) return { update: () => undefined, finish: () => undefined };
  const started = now();
  let lastDrawn = -Infinity;
  let drawn = false;
  const draw = (done: number) => {
    const width = stream.columns ?? 80;
    stream.write(`\r${renderProgress(done, total, now() - started, width)}`);
    drawn = true;
  };
  return {
    update(done) {
      const at = now();
      if (at - lastDrawn < REDRAW_MS && done < total) return;
      lastDrawn = at;
      draw(done);
    },
    /** Ends the bar's line so the next line starts clean. */
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
