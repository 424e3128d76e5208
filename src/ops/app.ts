// The operator's listener, separate from the public API and bound to 127.0.0.1 by default:
// health probes, Prometheus metrics, and (when ADMIN_TOKEN is set) the admin API under /admin/v1.
// Public API keys never open anything here. With the admin API comes the operator console
// under /console/ (src/console/).
import Router from '@koa/router';
import Koa from 'koa';
import { adminRouter } from '../admin/http/router.js';
import type { AdminOperations } from '../admin/operations.js';
import type { Config } from '../config.js';
import { consoleAdminAuth, consoleSignInRouter } from '../console/sign-in-http.js';
import { ConsoleSignIns } from '../console/sign-ins.js';
import { consolePages } from '../console/static-files.js';
import { ConsoleSignInStore } from '../store/installation/console-sign-ins.js';
import { AppError, ErrorCode } from '../errors.js';
import { errorHandler } from '../http/middleware/errors.js';
import { observeRequests } from '../http/middleware/metrics.js';
import { requestLog } from '../http/middleware/request-log.js';
import type { AppState } from '../http/state.js';
import type { Logger } from '../logger.js';
import { metrics as processMetrics, type ServiceMetrics } from '../metrics.js';
import { openApiJson } from '../openapi/document.js';
import { healthRoutes, type Readiness } from './health.js';
import { metricsRoutes } from './metrics.js';

export interface OpsDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly readiness: Readiness;
  readonly ops: AdminOperations;
  /** Defaults to the process-wide registry. */
  readonly metrics?: ServiceMetrics;
}

/**
 * Without ADMIN_TOKEN the admin API and the console do not exist; say what turns them on rather
 * than a bare 404. It tells no more than the token's absence, which the 404 told already.
 */
function adminApiOff(): Koa.Middleware<AppState> {
  return async (ctx, next) => {
    if (!/^\/(admin|console)(\/|$)/.test(ctx.path)) return next();
    throw new AppError(
      ErrorCode.ADMIN_API_OFF,
      'The admin API and the operator console are off on this instance: set ADMIN_TOKEN (at least 16 characters, e.g. from `openssl rand -hex 32`) and restart the service to turn them on',
    );
  };
}

export function buildOpsApp(deps: OpsDeps): Koa<AppState> {
  const app = new Koa<AppState>();
  app.on('error', (err: unknown) => deps.logger.debug({ err }, 'ops connection error'));
  const metrics = deps.metrics ?? processMetrics;
  app.use(requestLog(deps.logger, Date.now, { quietRoutes: new Set(['/healthz', '/readyz', '/metrics']) }));
  app.use(observeRequests(metrics));
  app.use(errorHandler(deps.logger, deps.config.limits.maxBodyBytes));

  const root = new Router<AppState>();
  healthRoutes(root, deps.readiness);
  // The admin API's document lives here, beside the API it describes, not on the public port.
  root.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson('ops');
  });
  metricsRoutes(root, metrics.registry);
  app.use(root.routes());
  // 405 with Allow for a wrong method here; the admin routers below answer their own first.
  app.use(root.allowedMethods());

  if (deps.config.admin.token) {
    // The operator console (docs/console.md) lives wherever the admin API does: its page, its
    // sign-ins, and a sign-in as a second way into the same admin routes.
    const signIns = new ConsoleSignIns(deps.config.admin.token, new ConsoleSignInStore(deps.ops.redis), deps.config.console);
    const consoleSignIn = consoleSignInRouter(signIns, deps.ops, deps.config.limits.maxBodyBytes);
    app.use(consolePages());
    app.use(consoleSignIn.routes());
    app.use(consoleSignIn.allowedMethods());
    const admin = adminRouter(deps.config.admin.token, deps.ops, deps.config, consoleAdminAuth(signIns));
    app.use(admin.routes());
    app.use(admin.allowedMethods());
  } else {
    app.use(adminApiOff());
  }
  return app;
}
