# The sandbox image for users who can pull base images. `npm run setup` builds the same image
# offline with build-rootfs.sh (debootstrap + docker import); both install packages.txt.
#   docker build -t durable-debugger-sandbox:1 -f deploy/sandbox-image/sandbox.Dockerfile deploy/sandbox-image
FROM debian:bookworm-slim
COPY packages.txt /tmp/packages.txt
RUN apt-get update \
 && grep -v '^#' /tmp/packages.txt | xargs apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/packages.txt \
 && useradd --uid 1000 --user-group --no-create-home --shell /bin/sh sandbox \
 && mkdir -p /workspace
WORKDIR /workspace
CMD ["sleep", "infinity"]
