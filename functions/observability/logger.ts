import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME, STAGE_DIMENSION } from '../../service/metric-names';
import { ENV } from '../config';

/**
 * The dimensions every metric (and log line) of this function instance carries besides `service`: the stage, when
 * the stack set one (absent locally), so the alarms of one stage never count another stage's metrics.
 */
export function defaultDimensions(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const stage = env[ENV.stage];
  return stage ? { [STAGE_DIMENSION]: stage } : {};
}

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: defaultDimensions() });
