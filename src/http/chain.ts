// One middleware made of several, composed once when the routes are built. @koa/router
// composes the layers a request matches on every request: a closure, a capture and a params
// object per layer, then a flatten of all their functions. Given each route as one composed
// function, with authentication and the limit inside it rather than as router.use() layers,
// it matches one layer and composes two functions.
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type { AppState } from './state.js';

export function chain(...middleware: Array<Middleware<AppState>>): Middleware<AppState> {
  return compose(middleware);
}
