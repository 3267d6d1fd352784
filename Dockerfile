# One image for every part; docker-compose.yml and deploy/kubernetes pick the part with the command.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The production install, less the packages' type declarations and source maps, which nothing runs (224 -> 135 MB).
RUN npm run build && npm prune --omit=dev && node scripts/prune-install.mjs

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# V8 lets each half of the young generation grow with the heap limit (past 16 MB with a few GB), and an
# idle process keeps what it grew: 16 MB took one platform process on PostgreSQL from about 300 to
# 232 MB resident at idle (docs/performance.md). npm start and npm run worker pass the same flag.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=400"
WORKDIR /app
COPY --from=build /app /app
# DATA_DIR of the deployments: a volume mounted here starts owned by the user the parts run as.
RUN mkdir -p /data && chown node:node /data
USER node
CMD ["node", "dist/scripts/start.js"]
