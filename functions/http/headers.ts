import type { APIGatewayProxyEvent } from 'aws-lambda';

/** Returns a header's value whatever its case (API Gateway passes headers as the client sent them). */
export function headerValue(
  headers: APIGatewayProxyEvent['headers'] | null | undefined,
  name: string,
): string | undefined {
  if (!headers) return undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value ?? undefined;
  return undefined;
}

/** Every value of a header whatever its case, in the order sent (API Gateway's `multiValueHeaders`). */
export function headerValues(
  multiValueHeaders: APIGatewayProxyEvent['multiValueHeaders'] | null | undefined,
  name: string,
): string[] {
  const wanted = name.toLowerCase();
  return Object.entries(multiValueHeaders ?? {}).flatMap(([key, values]) =>
    key.toLowerCase() === wanted ? (values ?? []) : [],
  );
}
