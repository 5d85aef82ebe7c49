import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
const wanted = readFileSync('.nvmrc', 'utf8').trim().split('.')[0];

/** Runs check-node.mjs under this Node, reporting `version` as process.version when given. */
function checkNode(version?: string) {
  const fake = version
    ? ['--import', `data:text/javascript,Object.defineProperty(process,"version",{value:"${version}"})`]
    : [];
  return spawnSync(process.execPath, [...fake, 'check-node.mjs'], { encoding: 'utf8' });
}

describe('check-node.mjs (the Node version guard)', () => {
  it('refuses another major version with one line naming the version needed and the one found', () => {
    const result = checkNode('v20.20.2');

    expect(result.status).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`Node.js ${wanted} is required (.nvmrc); this is v20.20.2\n`);
  });

  it('passes silently on the major version .nvmrc names', () => {
    const result = checkNode(`v${wanted}.0.0`);

    expect([result.status, result.stdout, result.stderr]).toEqual([0, '', '']);
  });

  it.each(['start', 'cli', 'bench', 'bench:doc'])('runs before `npm run %s`', (script) => {
    expect(packageJson.scripts[`pre${script}`]).toBe('node check-node.mjs');
  });
});
