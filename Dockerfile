# hvpa's controller image. Two stages: the builder makes the wheel and installs it, with its
# runtime dependencies only, into a virtual environment; the final stage copies that
# environment onto a clean base with no pip, no compiler and no caches, and runs as a fixed
# non-root user (the UID manifests/deployment.yaml names).
#
#   docker build -t REGISTRY/hvpa:0.1.0 .
#   docker run --rm REGISTRY/hvpa:0.1.0 version

# The base image by tag and by the digest of its multi-platform index, so a rebuild gets
# the same bytes (the tag alone moves with every Debian and Python patch). The digest is
# the one public projects pin for this tag; it could not be pulled where this was written,
# so verify it (and renew it with the tag) with
# `docker buildx imagetools inspect python:3.12.8-slim-bookworm`.
ARG PYTHON_IMAGE=python:3.12.8-slim-bookworm@sha256:2199a62885a12290dc9c5be3ca0681d367576ab7bf037da120e564723292a2f0

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# What the image is built from (.dockerignore keeps the rest out): the lock files, the
# package, its metadata, and the example Hvpas `hvpa sim` reads (packaged as hvpa/_examples).
COPY requirements.lock requirements-build.lock pyproject.toml README.md ./
COPY hvpa ./hvpa
COPY manifests/examples ./manifests/examples
# Every file installed is one the lock files name with its hash (make lock); binary wheels
# only, so nothing is compiled. hvpa's own wheel is built here, from this source, by the
# locked build backend, and installed without resolving anything more.
RUN pip install --require-hashes --only-binary=:all: -r requirements-build.lock \
    && pip wheel --no-deps --no-build-isolation --wheel-dir /dist . \
    && python -m venv --without-pip /opt/hvpa \
    && pip --python /opt/hvpa/bin/python install --require-hashes --only-binary=:all: \
       --no-deps -r requirements.lock \
    && pip --python /opt/hvpa/bin/python install --no-deps /dist/hvpa-*.whl

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="hvpa" \
      org.opencontainers.image.description="Horizontal and vertical pod autoscaling in tandem, from one decision" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# The base image's pip and setuptools are not needed at run time.
RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel \
    && groupadd --gid 65532 hvpa \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin hvpa
COPY --from=builder /opt/hvpa /opt/hvpa
ENV PATH=/opt/hvpa/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
# Metrics and /debug/state; health probes.
EXPOSE 8080 8081
ENTRYPOINT ["hvpa"]
CMD ["run"]
