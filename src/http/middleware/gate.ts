// The platform-only access gate (src/gate/) in the public API's middleware chain: before any
// key lookup, each request is handed to the gate's checks as a plain request (no Koa context
// crosses into the policy), and goes on only when they pass. A principal the checks resolved
// (an editor play-test's key) is handed on, so authenticate.ts does not look the key up again.
// Bans apply in every mode (an operator's ban is a ban); with the gate off (the default) and no
// ban in force, a request passes without a promise of its own.
import type { Middleware } from 'koa';
import type { Gate, GateRequest } from '../../gate/gate.js';
import type { AppState } from '../state.js';

export function gateRequests(gate: Gate): Middleware<AppState> {
  return (ctx, next) => {
    if (gate.idle) return next();
    const request: GateRequest = {
      method: ctx.method,
      path: ctx.path,
      remoteAddress: ctx.req.socket.remoteAddress,
      headers: ctx.req.headers,
      startedAt: ctx.state.startedAt,
    };
    return gate.admit(request).then((principal) => {
      if (principal) ctx.state.principal = principal;
      return next();
    });
  };
}
