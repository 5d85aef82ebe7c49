import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { esbuildOptions, handlerEntries } from '../../infra/bundling';

describe('Lean DynamoDB: the functions bundle no AWS SDK', () => {
  let outDir: string;
  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), 'petstore-lean-bundles-'));
  });
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('leaves every @aws-sdk and @smithy module out of each function bundled as the stack bundles it', async () => {
    // The adapters' SDK-accepting subclasses (for the CLI) import the SDK; unused by the handlers, esbuild must
    // drop them. This checks it did, for every function, from esbuild's own account of the output.
    for (const { handler, entry } of handlerEntries()) {
      const outfile = join(outDir, handler, 'index.js');
      const result = await build({ ...esbuildOptions(entry, outfile), metafile: true, write: true, logLevel: 'error' });
      const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
      const sdkModules = Object.entries(output?.inputs ?? {})
        .filter(([path, input]) => /node_modules\/@(aws-sdk|smithy|aws-crypto)\//.test(path) && input.bytesInOutput > 0)
        .map(([path]) => path);
      expect([handler, sdkModules]).toEqual([handler, []]);
      expect([handler, (output?.bytes ?? Infinity) < 100 * 1024]).toEqual([handler, true]);
    }
  });
});
