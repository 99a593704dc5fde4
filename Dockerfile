# The specledger image: the CLI, the flows and Prefect (server, deploy, worker) that
# docker-compose.yml runs. No secret is baked in: the database URLs arrive as environment
# variables at run time, and .dockerignore keeps .env out of the build context.
FROM python:3.11-slim-bookworm

# WeasyPrint's text stack, the PDF fonts and pdftotext: DEBIAN_PACKAGES in ./dev, less the tools
# only the tests use (tests/deploy/test_compose.py keeps the two lists in step).
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core poppler-utils \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

# Dependencies first, in their own layer: a code change rebuilds in seconds, not minutes.
# Exactly the locked releases, checked against their hashes (./dev lock writes the file).
COPY requirements/runtime.lock ./requirements/
RUN pip install --no-cache-dir --require-hashes -r requirements/runtime.lock

# Editable, so the CLI and the flows run the code in /app, next to data/ (PROJECT_ROOT) and
# prefect.yaml, whose pull step changes into SPECLEDGER_PROJECT_DIR before a flow run.
COPY . /app
RUN pip install --no-cache-dir --no-deps -e /app

RUN useradd --create-home --uid 10001 specledger \
    && mkdir -p /var/lib/specledger \
    && chown specledger:specledger /var/lib/specledger
ENV SPECLEDGER_HOME=/var/lib/specledger \
    SPECLEDGER_PROJECT_DIR=/app \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    DO_NOT_TRACK=1
USER specledger

CMD ["specledger", "--help"]
