import { SourceMap } from 'node:module';
import { CliError } from '../errors';
import { type CommandContext, readInputFile } from './context';

/** A bundle position in a logged stack, `…index.js:line:column` (the functions run without source maps). */
const BUNDLE_POSITION = /([^\s"'()]*index\.js):(\d+):(\d+)/g;

/** The repository-relative part of a source the map names (`../../work/x/functions/a.ts` → `functions/a.ts`). */
function repositoryPath(source: string): string {
  const known = /(?:^|\/)((?:functions|service|node_modules)\/.*)$/.exec(source);
  return known?.[1] ?? source.replace(/^(?:\.\.\/)+/, '');
}

/** `text` with every bundle position `map` covers replaced by the source position it was built from. */
export function mapBundlePositions(text: string, map: SourceMap): string {
  return text.replace(BUNDLE_POSITION, (whole, _file: string, line: string, column: string) => {
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1);
    // findEntry answers the nearest mapping before the position, from an earlier line too: only the same line counts.
    if (!('originalSource' in entry) || !entry.originalSource || entry.generatedLine !== Number(line) - 1) return whole;
    return `${repositoryPath(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
  });
}

/** `stack map MAPFILE LOGFILE`: prints LOGFILE with the bundle's positions mapped to the TypeScript. */
export async function mapStack(context: CommandContext): Promise<void> {
  const [mapFile, logFile] = context.positionals as [string, string];
  const mapText = await readInputFile(context.io, mapFile, 'the source map');
  let payload: ConstructorParameters<typeof SourceMap>[0];
  try {
    payload = JSON.parse(mapText);
  } catch {
    throw new CliError(`${mapFile} is not a source map (not JSON)`);
  }
  if (typeof payload !== 'object' || payload === null || typeof payload.mappings !== 'string')
    throw new CliError(`${mapFile} is not a source map (no mappings)`);
  context.io.stdout.write(
    mapBundlePositions(await readInputFile(context.io, logFile, 'the log'), new SourceMap(payload)),
  );
}
