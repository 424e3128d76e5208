// /admin/v1/workspaces/:id/export and /import: a workspace's players as NDJSON, streamed both
// ways (admin/workspace-transfer.ts). The export is pulled from Redis as fast as the client
// reads it; the upload is streamed to a temp file as it arrives (never held in memory, and
// received within HTTP_REQUEST_TIMEOUT_MS however long its players take to write), then read
// line by line.
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import { AppError, ErrorCode } from '../../../errors.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { importQuery } from '../../../schemas/admin.js';
import type { AdminOperations } from '../../operations.js';

const validateImport = compile<{ mode?: string }>(importQuery);
export const NDJSON = 'application/x-ndjson';

export function transferAdminRoutes(router: Router<AppState>, ops: AdminOperations): void {
  router.get('/workspaces/:id/export', async (ctx) => {
    const exported = await ops.exportWorkspace(ctx.params['id']!);
    ctx.type = NDJSON;
    ctx.attachment(`${exported.workspaceId}.ndjson`);
    ctx.body = Readable.from(exported.lines);
  });

  router.post('/workspaces/:id/import', async (ctx) => {
    const { mode } = validateImport('query', ctx.query);
    if (!ctx.is(NDJSON) || (ctx.get('content-encoding') || 'identity') !== 'identity') {
      throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Send the export as ${NDJSON}, uncompressed`);
    }
    try {
      ctx.body = { success: true, data: await ops.importWorkspace(ctx.params['id']!, { stream: ctx.req, spool: true }, { mode }) };
    } catch (err) {
      // The client went away (or its link dropped) mid-upload: its request's failure, not ours,
      // so a 4xx in the log and the metrics rather than a 500 and an error line.
      if (!(err instanceof AppError) && ctx.req.readableAborted) {
        throw new AppError(ErrorCode.INVALID_REQUEST, 'request aborted: the upload did not arrive whole', { cause: err });
      }
      throw err;
    }
  });
}
