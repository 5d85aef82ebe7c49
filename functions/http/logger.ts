import { Logger } from '@aws-lambda-powertools/logger';
import { defaultDimensions, SERVICE_NAME } from './metric-names';

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: defaultDimensions() });
