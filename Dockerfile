# syntax=docker/dockerfile:1
# The player data service as a small production image: compiled JavaScript, production
# dependencies only, no npm, running as an unprivileged user with node as the main process.
ARG NODE_IMAGE=node:22-alpine

# Build stage: compile TypeScript with the dev dependencies. tsc needs no install scripts (the
# test tools' native add-ons would want a compiler that the image does not have).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
RUN npm run build

# Dependencies stage: production dependencies only, without install scripts.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime stage.
FROM ${NODE_IMAGE}
# The package managers are not needed to run the service: fewer files, fewer advisories.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
    /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    ADMIN_PORT=8081
WORKDIR /app
# Root owns the code; the service user can read it but not change it.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY lua ./lua
# The image's `node` user, by number so that runAsNonRoot checks can verify it.
USER 1000:1000
EXPOSE 8080
# /readyz lives on the ops listener (127.0.0.1:ADMIN_PORT by default): Redis answers, the
# scripts are loaded, and the service is not draining. busybox wget fails on a 503.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD wget -q -O /dev/null "http://127.0.0.1:${ADMIN_PORT}/readyz" || exit 1
STOPSIGNAL SIGTERM
# Exec form: node is the main process and receives SIGTERM itself: /readyz turns 503 for
# SHUTDOWN_DRAIN_MS while requests are still served, then in-flight requests get
# SHUTDOWN_GRACE_MS. main.ts handles the signal, so node as PID 1 is fine; run with --init
# (compose: init: true) to also have zombies reaped. The flags are npm start's: a 64 MB young
# generation (README, "Performance").
CMD ["node", "--max-semi-space-size=64", "dist/main.js"]
