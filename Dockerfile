# syntax=docker/dockerfile:1
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# Applied by npm ci's postinstall (ADR 037); pruning keeps the patched files.
COPY patches patches
RUN npm ci --no-audit --no-fund
COPY .nvmrc tsconfig.json tsconfig.build.json nest-cli.json ./
# The npm scripts run on the project's Node.js (this image's, found by node-runtime.sh).
COPY scripts/with-node.sh scripts/node-runtime.sh scripts/
COPY apps apps
COPY libs libs
COPY proto proto
COPY bench bench
COPY test/support test/support
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY libs/persistence/migrations libs/persistence/migrations
COPY libs/persistence/keystore-migrations libs/persistence/keystore-migrations
COPY libs/contract/schema libs/contract/schema
COPY proto proto
USER node
EXPOSE 50051 9464
# SIGTERM is handled: the batch in progress commits or rolls back whole.
CMD ["node", "dist/apps/toolhistory/src/main.js"]
