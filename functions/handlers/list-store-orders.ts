import { METRIC_NAMES } from '../../service/metric-names';
import { createApiHandler } from '../http/middleware';
import { errorResponse } from '../http/responses';
import { metrics } from '../observability/metrics';

/** `GET /store/orders`: the spec does not define its behaviour, so it answers 501. */
export const handler = createApiHandler(async function listStoreOrders() {
  metrics.addMetric(METRIC_NAMES.unimplementedRouteCalled, 'Count', 1);
  return errorResponse('NOT_IMPLEMENTED', 'GET /store/orders is not implemented by this service.');
});
