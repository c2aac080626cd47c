# mcp-localtools in a container: the real isolation boundary for a model's tool use.
#   docker build -t mcp-localtools .
#   docker run -i --rm -v "$PWD:/workspace" mcp-localtools            # stdio, /workspace as the root
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
ENTRYPOINT ["mcp-localtools"]
CMD ["--root", "/workspace"]
