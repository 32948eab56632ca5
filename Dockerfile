# syntax=docker/dockerfile:1
#
# opsearch team server: MCP over Streamable HTTP (/mcp), legacy SSE
# (/sse + /messages), REST (/api/tools/{name}, /openapi.json), /health and
# /metrics on port 8080. Every user connects with their own OpenProject
# API key; their indexes live in the /data volume.
#
#   docker build -t opsearch .
#   docker run -p 8080:8080 -v opsearch-data:/data \
#     -e OPENPROJECT_BASE_URL=https://openproject.example.com opsearch
#
# See compose.yaml and the README's "Team server (HTTP)" section.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# A static binary: no cgo, no libc needed at run time.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/opsearch ./cmd/opsearch \
 && mkdir -p /out/data

# distroless static, as the nonroot user (uid 65532): no shell, no package
# manager, CA certificates and tzdata included.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/opsearch /opsearch
# The volume's mount point, owned by nonroot so a new named volume is
# writable (Docker copies this ownership into it).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# Inside a container the server must listen on all interfaces to be
# reachable through the published port; publish it on the host with
# care (e.g. -p 127.0.0.1:8080:8080 behind a TLS reverse proxy).
ENV OPSEARCH_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
VOLUME ["/data"]
EXPOSE 8080
# No curl in distroless: the binary checks its own /health on $PORT.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/opsearch", "healthcheck"]
ENTRYPOINT ["/opsearch"]
CMD ["serve", "--http", ":8080"]
