import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME, STAGE_DIMENSION } from '../../service/metric-names';
import { ENV } from '../config';

/** The stage dimension of every metric and log line, when the stack set one: one stage's alarms count its own. */
export function defaultDimensions(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const stage = env[ENV.stage];
  return stage ? { [STAGE_DIMENSION]: stage } : {};
}

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: defaultDimensions() });
