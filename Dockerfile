# mcp-localtools in a container: the real isolation boundary for a model's tool use.
# The README's "In a container" section has the commands; .ci/container runs exactly those.
#
# Network service (the default): Streamable HTTP on port 8765, the token from a mounted 0600 file.
#   mcp-localtools token --file ~/.config/mcp-localtools/token        # once, on the host
#   docker build -t mcp-localtools .                    # podman: podman build --format docker ...
#   docker run --rm -p 127.0.0.1:8765:8765 --user "$(id -u):$(id -g)" \
#     -v "$PWD:/workspace" \
#     -v "$HOME/.config/mcp-localtools/token:/run/secrets/mcp-localtools-token:ro" \
#     mcp-localtools
# stdio instead (a client starts the container; in its JSON, write the uid, gid and folder out):
#   docker run -i --rm --network none --no-healthcheck --user "$(id -u):$(id -g)" -v "$PWD:/workspace" \
#     mcp-localtools --root /workspace
#
# Any Python 3.11+ base works, Debian's own python3 included (the install goes into a venv, so
# PEP 668 does not apply): --build-arg BASE_IMAGE=... . Behind a package mirror or a TLS-re-signing
# proxy, pass pip's settings as build args (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST,
# PIP_CERT); PIP_CERT names a CA bundle inside the build, e.g. one mounted with podman's
# `build -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/host-ca.crt:ro`.
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}

ARG PIP_INDEX_URL=
ARG PIP_EXTRA_INDEX_URL=
ARG PIP_TRUSTED_HOST=
ARG PIP_CERT=

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/mcp-localtools
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
# Build args that were not given arrive empty; pip must not see them as settings.
RUN for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_CERT; do \
        eval "value=\${$name}"; [ -n "$value" ] || unset "$name"; \
    done \
    && python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-compile '.[bwrap]' \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin mcp \
    && mkdir /workspace \
    && chown mcp:mcp /workspace

ENV PATH=/opt/venv/bin:$PATH
USER mcp
WORKDIR /workspace
EXPOSE 8765
# The HTTP health check fits the default (network) command; the stdio form runs with
# --no-healthcheck. podman keeps HEALTHCHECK only in images built with --format docker.
HEALTHCHECK --interval=30s --timeout=3s \
    CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2)"
ENTRYPOINT ["mcp-localtools"]
# 0.0.0.0 inside the container is reached through the published port; clients use localhost.
CMD ["--root", "/workspace", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "8765", \
     "--allowed-host", "localhost", "--auth-token-file", "/run/secrets/mcp-localtools-token"]
