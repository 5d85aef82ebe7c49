import { METRIC_NAMES } from '../http/metric-names';
import { metrics } from '../http/metrics';
import { createApiHandler } from '../http/middleware';
import { errorResponse } from '../http/responses';

/** `GET /store/orders`: the spec does not define its behaviour, so it answers 501. */
export const handler = createApiHandler(async function listStoreOrders() {
  metrics.addMetric(METRIC_NAMES.unimplementedRouteCalled, 'Count', 1);
  return errorResponse('NOT_IMPLEMENTED', 'GET /store/orders is not implemented by this service.');
});
