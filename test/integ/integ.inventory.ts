/** The integ-runner entry point (`npm run integ`): see createIntegApp and docs/deploying.md, "npm run integ". */
import { createIntegApp } from './integ-app';

createIntegApp().app.synth();
