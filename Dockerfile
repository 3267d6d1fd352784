# One image for every part; docker-compose.yml and deploy/kubernetes pick the part with the command.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app /app
# DATA_DIR of the deployments: a volume mounted here starts owned by the user the parts run as.
RUN mkdir -p /data && chown node:node /data
USER node
CMD ["node", "dist/scripts/start.js"]
