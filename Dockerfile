# mcp-localtools in a container: the real isolation boundary for a model's tool use.
#
# Network service (the default): Streamable HTTP on port 8765, the token from a mounted 0600 file.
#   mcp-localtools token --file ~/.config/mcp-localtools/token        # once, on the host
#   docker build -t mcp-localtools .
#   docker run --rm -p 127.0.0.1:8765:8765 --user "$(id -u):$(id -g)" \
#     -v "$PWD:/workspace" \
#     -v "$HOME/.config/mcp-localtools/token:/run/secrets/mcp-localtools-token:ro" \
#     mcp-localtools
# stdio instead (a client starts the container):
#   docker run -i --rm --user "$(id -u):$(id -g)" -v "$PWD:/workspace" mcp-localtools --root /workspace
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/mcp-localtools
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
RUN pip install . \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin mcp \
    && mkdir /workspace \
    && chown mcp:mcp /workspace

USER mcp
WORKDIR /workspace
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=3s \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2)"
ENTRYPOINT ["mcp-localtools"]
# 0.0.0.0 inside the container is reached through the published port; clients use localhost.
CMD ["--root", "/workspace", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", "8765", \
     "--allowed-host", "localhost", "--auth-token-file", "/run/secrets/mcp-localtools-token"]
