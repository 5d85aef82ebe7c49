/** The integ app's entry point (`npm run integ`, `npm run integ -- --dry-run`): see createIntegApp and docs/deploying.md. */
import { createIntegApp } from './integ-app';

createIntegApp().app.synth();
