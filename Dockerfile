# The service's image: the same code runs the embedded shape (`npm start`, data in /data) and each
# process of the scaled shape (`npm run start:api`, `npm run start:worker`; compose.yaml). The README's
# commands are the image's commands (test/compose.test.ts checks it).

# --- build: every dependency, the service compiled to JavaScript (dist/), then the web client's bundle (web/dist)
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY web/package.json web/package-lock.json web/
# postinstall installs web/'s dependencies from its own lockfile.
RUN npm ci --no-audit --no-fund
COPY . .
# The OpenAPI document the web client is typed from is read from the app on a throw-away embedded database.
RUN node scripts/build-server.mjs && npm run build:web

# --- runtime: production dependencies, the compiled service and the built web client, as a non-root user
FROM node:20-bookworm-slim AS runtime
# npm runs a script through a shell and passes a stop's SIGTERM to that shell only: Debian's sh (dash)
# would die and leave the service running until SIGKILL; bash replaces itself with node, which then
# gets the signal and shuts down gracefully.
ENV NODE_ENV=production \
    DATA_DIR=/data \
    PORT=3000 \
    HOST=0.0.0.0 \
    npm_config_script_shell=/bin/bash
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the postinstall would install the web client's build tools, which the bundle no longer needs.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# Only the output ships: the start command's build check (scripts/build-server.mjs) finds no sources
# to compare with and runs what is there.
COPY --from=build /app/dist ./dist
COPY scripts ./scripts
COPY web/scripts ./web/scripts
COPY --from=build /app/web/dist ./web/dist
# The start command's check (web/scripts/ensure-built.mjs) compares the bundle with the sources it
# finds; only the bundle ships, so it must read as the newest file.
# The embedded database's empty cluster (node_modules/.cache), made here as root: the service's user
# cannot write node_modules, and a new data folder starts as a copy of it.
RUN touch web/dist/index.html \
 && node scripts/build-server.mjs \
 && mkdir -p /data \
 && chown node:node /data
# The embedded shape keeps its database, files, outbox and generated secrets in /data (mount a volume
# there); the scaled shape writes nothing to it (README, "The scaled shape").
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/test').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["npm", "start"]
