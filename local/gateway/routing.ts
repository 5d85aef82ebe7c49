import { apiResourcePaths, CATCH_ALL_RESOURCE } from '../../service/gateway-responses';
import { ROUTES, type Route } from '../../service/routes';

/** Matches a path (raw segments after `/v1`) against a route path; returns decoded path parameters. */
export function matchPath(pattern: string, rawSegments: readonly string[]): Record<string, string> | undefined {
  const parts = pattern.split('/').filter(Boolean);
  if (parts.length !== rawSegments.length) return undefined;
  const params: Record<string, string> = Object.create(null);
  for (const [i, part] of parts.entries()) {
    const raw = rawSegments[i] as string;
    if (part.startsWith('{') && part.endsWith('}')) {
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

const RESOURCE_PATHS = apiResourcePaths();

/** The API Gateway resource a stage path (after `/v1`) resolves to: a route's, one of their prefixes, or the catch-all. */
export function resourceOf(stagePath: string): string {
  if (stagePath === '/') return '/';
  const rawSegments = stagePath.split('/').slice(1);
  return RESOURCE_PATHS.find((path) => path !== '/' && matchPath(path, rawSegments)) ?? CATCH_ALL_RESOURCE;
}

/** Where a request lands: its route with path parameters, else the path's routes (a 405) or none (a 404). */
export interface RouteMatch {
  route?: Route;
  pathParameters: Record<string, string>;
  /** A route at this path under another method, for the 405's Allow. */
  otherMethod?: Route;
  /** The API Gateway method the request resolves to, which the throttling counts: `GET /inventory/{petId}`. */
  apiMethod: string;
}

/** Resolves a request on the stage to the route table (service/routes.ts) and the resource it falls under. */
export function routeRequest(method: string, stagePath: string, preflight: boolean): RouteMatch {
  const rawSegments = stagePath.split('/').slice(1);
  const atPath = ROUTES.flatMap((route) => {
    const params = matchPath(route.path, rawSegments);
    return params ? [{ route, params }] : [];
  });
  const exact = atPath.find((candidate) => candidate.route.method === method);
  const apiMethod = `${exact ? method : preflight ? 'OPTIONS' : 'ANY'} ${resourceOf(stagePath)}`;
  return {
    apiMethod,
    ...(exact ? { route: exact.route } : {}),
    pathParameters: exact?.params ?? {},
    ...(atPath[0] ? { otherMethod: atPath[0].route } : {}),
  };
}
