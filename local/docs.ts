// `npm start`'s docs page (docs/api.md, "Interactive docs"): Swagger UI over openapi.yaml, loading nothing from the
// network, which its Content-Security-Policy makes the browser enforce.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';
import { API_STAGE_NAME } from '../service/routes';

export const DOCS_PATH = '/docs';

const REPO_ROOT = join(import.meta.dirname, '..');

/** Files of swagger-ui-dist the page uses, with their media types. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI sets inline style attributes; styles still load from this origin only.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const INDEX_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Pet Store Inventory API: docs</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/init.js"></script>
  </body>
</html>
`;

/** Swagger UI pretty-prints responses with JSON.parse + JSON.stringify, which round integers beyond 2^53: here a
 * reviver-less JSON.parse keeps them as JSON.rawJSON values, in browsers that have it. */
export const EXACT_JSON_SCRIPT = `(function keepLargeIntegersExact(global) {
  'use strict';
  var json = global.JSON;
  if (typeof json.rawJSON !== 'function') return;
  var parse = json.parse;
  var integer = /^-?(0|[1-9][0-9]*)$/;
  json.parse = function parseKeepingLargeIntegers(text, reviver) {
    if (reviver !== undefined) return parse.call(json, text, reviver);
    return parse.call(json, text, function keepSource(_key, value, context) {
      if (typeof value === 'number' && !Number.isSafeInteger(value) && context && integer.test(context.source)) {
        return json.rawJSON(context.source);
      }
      return value;
    });
  };
})(globalThis);
`;

// The large-integer patch first: Swagger UI parses every response after it is in place.
const INIT_SCRIPT = `${EXACT_JSON_SCRIPT}
window.ui = SwaggerUIBundle({
  url: '${DOCS_PATH}/openapi-local.yaml',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // No request to validator.swagger.io: the page must work offline and leak nothing.
  validatorUrl: null,
  // Shows x-stability: experimental on the PATCH.
  showExtensions: true,
  displayOperationId: true,
  defaultModelsExpandDepth: 2,
  docExpansion: 'list',
  tryItOutEnabled: false,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** The page's contract: the local server first as a relative `/v1`, so "Try it out" calls the page's own origin,
 * and no Idempotency-Key example, which every page would send and so replay one another's PATCH for 24 h. */
export function localizeContract(text: string): string {
  const doc = parseDocument(text);
  const servers = doc.get('servers') as YAMLSeq<YAMLMap>;
  const index = servers.items.findIndex((item) => String(item.get('url')).startsWith('http://127.0.0.1'));
  const [local] = servers.items.splice(index, 1);
  if (local) {
    local.set('url', `/${API_STAGE_NAME}`);
    local.delete('variables');
    servers.items.unshift(local);
  }
  doc.deleteIn(['components', 'parameters', 'IdempotencyKey', 'example']);
  return doc.toString({ lineWidth: 0 });
}

type Page = { contentType: string; body: () => Promise<string | Buffer> | string };

/** Answers GET and HEAD of the page, its files and `/docs/openapi.yaml` (byte for byte); any other request falls
 * through to the gateway's 403, as outside a stage. */
export function createDocsHandler() {
  const openapiPath = join(REPO_ROOT, 'openapi.yaml');
  const assetsDir = dirname(fileURLToPath(import.meta.resolve('swagger-ui-dist/package.json')));
  const yaml = 'application/yaml; charset=utf-8';
  const pages = new Map<string, Page>([
    ['', { contentType: 'text/html; charset=utf-8', body: () => INDEX_HTML }],
    ['init.js', { contentType: 'text/javascript; charset=utf-8', body: () => INIT_SCRIPT }],
    ['openapi.yaml', { contentType: yaml, body: () => readFile(openapiPath) }],
    [
      'openapi-local.yaml',
      { contentType: yaml, body: async () => localizeContract(await readFile(openapiPath, 'utf8')) },
    ],
    ...Object.entries(ASSETS).map(([file, contentType]): [string, Page] => [
      file,
      { contentType, body: () => readFile(join(assetsDir, file)) },
    ]),
  ]);
  return async function serveDocs(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const page =
      path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`) ? pages.get(path.slice(DOCS_PATH.length + 1)) : undefined;
    if (!page || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
    req.resume();
    const body = await page.body();
    res.writeHead(200, {
      'Content-Type': page.contentType,
      'Content-Length': String(Buffer.byteLength(body)),
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Referrer-Policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
