// Runs before `npm start`, the CLI and the bench (npm pre-scripts): a wrong Node refuses at once instead of starting
// and then failing requests. Plain syntax and node:fs only, so that any Node version can run it to say so.
import { readFileSync } from 'node:fs';

const wanted = readFileSync(new URL('.nvmrc', import.meta.url), 'utf8').trim();
const major = (version) => version.replace(/^v/, '').split('.')[0];

if (major(wanted) !== major(process.version)) {
  console.error(`Node.js ${major(wanted)} is required (.nvmrc); this is ${process.version}`);
  process.exit(1);
}
