import { ROUTES, type Route } from '../../service/routes';

/** Matches a path (raw segments after `/v1`) against a route path; returns decoded path parameters. */
function matchPath(pattern: string, rawSegments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').filter(Boolean);
  if (parts.length !== rawSegments.length) return undefined;
  const params: Record<string, string> = Object.create(null);
  for (const [i, part] of parts.entries()) {
    const raw = rawSegments[i] as string;
    if (isParameter(part)) {
      if (raw.length === 0) return undefined;
      params[part.slice(1, -1)] = safeDecode(raw);
    } else if (safeDecode(raw) !== part) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const isParameter = (segment: string) => segment.startsWith('{') && segment.endsWith('}');

/** Orders route paths of one length as API Gateway picks a resource: a static segment wins at the first difference. */
function staticFirst(a: string, b: string): number {
  const [partsOfA, partsOfB] = [a.split('/'), b.split('/')];
  const at = partsOfA.findIndex((part, i) => isParameter(part) !== isParameter(partsOfB[i] ?? ''));
  if (at < 0) return 0;
  return isParameter(partsOfA[at] ?? '') ? 1 : -1;
}

/** Where a request lands: its route with path parameters, else the path's routes (a 405) or none (a 404). */
export interface RouteMatch {
  route?: Route;
  pathParameters: Record<string, string>;
  /** The route path the request's resource has when no route there takes its method, for the 405's Allow. */
  resourcePath?: string;
  /** The API Gateway method the request resolves to, which the throttling counts: `GET /inventory/{petId}`. */
  apiMethod: string;
}

/** Resolves a request as API Gateway does: first the resource (`/inventory/changes` before `/inventory/{petId}`),
 * then the method on it; paths no route has fall to the catch-all `ANY /{proxy+}`. */
export function routeRequest(
  method: string,
  stagePath: string,
  preflight: boolean,
  routes: readonly Route[] = ROUTES,
): RouteMatch {
  const rawSegments = stagePath.split('/').slice(1);
  const matching = routes.filter((route) => matchPath(route.path, rawSegments));
  const [resourcePath] = matching.map((route) => route.path).sort(staticFirst);
  const route = matching.find((candidate) => candidate.path === resourcePath && candidate.method === method);
  const apiMethod = `${route ? method : preflight ? 'OPTIONS' : 'ANY'} ${resourcePath ?? '/{proxy+}'}`;
  if (!route) return { apiMethod, pathParameters: {}, ...(resourcePath ? { resourcePath } : {}) };
  return { apiMethod, route, pathParameters: matchPath(route.path, rawSegments) ?? {} };
}
