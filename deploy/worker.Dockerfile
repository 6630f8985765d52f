# The durable-debugger worker, for docker-compose.yml (and any container platform).
#   docker build -t durable-debugger-worker -f deploy/worker.Dockerfile .
# It talks to the host's Docker engine through its socket to run sandboxes. The image holds the
# built package (scripts/build.ts: the bundled command, the prebuilt workflow bundle), no node_modules.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
RUN npm run build

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/durable-debugger
COPY package.json ./
COPY --from=build /src/dist ./dist
COPY deploy/sandbox-image ./deploy/sandbox-image
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["worker"]
