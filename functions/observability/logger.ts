import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME } from '../../service/metric-names';
import { defaultDimensions } from './dimensions';

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME, persistentKeys: defaultDimensions() });
