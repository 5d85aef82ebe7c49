import { createProgress, renderProgress } from '../../cli/progress';
import { captureStream as aStream } from '../fixtures/cli/capture-io';

describe('Function: renderProgress', () => {
  it('shows the bar, the percentage, the counts and the rate', () => {
    // Act
    const line = renderProgress(12_000, 30_000, 2_000, 80);

    // Assess
    expect(line).toMatch(/^\[#{16}-{24}\] {2}40% {2}12000\/30000 rows {2}6000 rows\/s$/);
    expect(line.length).toBeLessThanOrEqual(80);
  });

  it('is full at the end and copes with an empty import', () => {
    // Act & Assess
    expect(renderProgress(0, 0, 0, 80)).toMatch(/^\[#+\] 100%/);
    expect(renderProgress(5, 5, 1000, 40)).toMatch(/^\[#+\] 100% {2}5\/5 rows/);
    expect(renderProgress(5, 5, 1000, 40).length).toBeLessThanOrEqual(40);
  });
});

describe('Function: createProgress', () => {
  it('draws nothing when the stream is not a terminal', () => {
    // Prepare
    const stream = aStream(false);
    const progress = createProgress(stream, 10);

    // Act
    progress.update(5);
    progress.finish();

    // Assess
    expect(stream.text).toBe('');
  });

  it('redraws in place at most once per interval, always draws the last update and ends the line', () => {
    // Prepare
    const stream = aStream(true);
    let clock = 0;
    const progress = createProgress(stream, 100, () => clock);

    // Act
    progress.update(10);
    clock = 50;
    progress.update(20);
    clock = 150;
    progress.update(30);
    progress.update(100);
    progress.finish();

    // Assess
    const frames = stream.text.split('\r').filter(Boolean);
    expect(frames).toHaveLength(3);
    expect(frames[2]).toMatch(/100%.*100\/100 rows/);
    expect(stream.text.endsWith('\n')).toBe(true);
  });
});
