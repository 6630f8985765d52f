# The durable-debugger worker, for docker-compose.yml (and any container platform).
#   docker build -t durable-debugger-worker -f deploy/worker.Dockerfile .
# It talks to the host's Docker engine through its socket to run sandboxes.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/durable-debugger
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY deploy/sandbox-image ./deploy/sandbox-image
ENTRYPOINT ["node", "bin/durable-debugger.js"]
CMD ["worker"]
