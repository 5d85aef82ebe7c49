import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** Service name for logs and metrics; the stack sets POWERTOOLS_SERVICE_NAME, this is the local default. */
export const SERVICE_NAME = 'pet-store-inventory';

/** The one structured logger of a function instance (Powertools: built once at module scope). */
export const logger = new Logger({ serviceName: SERVICE_NAME });

/** The one metrics emitter of a function instance (CloudWatch EMF, flushed after each invocation). */
export const metrics = new Metrics({ namespace: 'PetStoreInventory', serviceName: SERVICE_NAME });
