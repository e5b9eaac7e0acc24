# The two commands: `make serve` and `make test`. Both create .venv (python3 >= 3.11) if it
# is missing, install both distributions editable (the server through maturin: incremental
# cargo builds in target/; clients/python, the pure-Python tablier-client) and generate the
# Python gRPC stubs from proto/ (their builds do it too; `make stubs` redoes it in place).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
TOOLS  := .tools/bin
GHZ    := v0.93.0

.PHONY: serve test lint bench bench-service install stubs clean-stubs tools

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "tablier needs python3 >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e '.[dev]' -e 'clients/python[typing,play,loadtest]'

stubs: install
	$(PY) build_backend/tablier_build.py
	$(PY) clients/python/hatch_build.py

serve: stubs
	$(VENV)/bin/tablier serve

# ghz (the usual gRPC load tool; tests/e2e/test_ghz.py), built from its Go module when Go is here.
tools:
	@if [ -x $(TOOLS)/ghz ]; then :; \
	elif command -v go >/dev/null 2>&1; then \
		echo "installing ghz $(GHZ) into $(TOOLS) (go install, about 2 min the first time)"; \
		GOBIN=$(CURDIR)/$(TOOLS) go install github.com/bojand/ghz/cmd/ghz@$(GHZ); \
	else echo "no Go toolchain: the ghz test will be skipped"; fi

# What the tests need beyond Python, built when its toolchain is here: ghz (Go), the web app,
# the npm package and buf (npm). Without Chromium the browser tests skip (CI=1 fails them).
test-deps: tools
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory web; \
	else echo "no npm: the web app, npm package and buf schema tests will be skipped (install Node 20.19+ with npm)"; fi
	@command -v $${CHROMIUM:-chromium} >/dev/null 2>&1 || \
		echo "no Chromium: the browser tests will be skipped (apt-get install chromium)"

test: stubs test-deps
	cargo test --workspace --release
	$(PY) -m pytest

# The style gates (.ci/run runs them before the tests): the Rust tree formatted and free of
# clippy warnings; the Python of service/ and clients/python formatted and linted by ruff and
# type-checked by mypy --strict (settings in each pyproject.toml; the generated stubs are left
# out); and the typed surface of the compiled core (service/tablier/_core.pyi) checked against
# the module itself by stubtest.
lint: stubs
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	$(PY) -m ruff check service clients/python
	$(PY) -m ruff format --check service clients/python
	$(PY) -m mypy
	cd clients/python && ../../$(PY) -m mypy
	$(PY) -m mypy.stubtest tablier._core

# The TypeScript client and the web app (clients/web/dist, served by `tablier serve --web-listen`).
# npm ci again only when the lock file changed (npm writes node_modules/.package-lock.json).
.PHONY: web test-deps
web: clients/web/node_modules/.package-lock.json
	cd clients/web && npm run build

clients/web/node_modules/.package-lock.json: clients/web/package-lock.json
	cd clients/web && npm ci --no-audit --no-fund

# The server's container image (deploy/Containerfile, deploy/README.md): the server wheel and its
# dependencies' wheels made here, then `podman build` (ENGINE=docker for docker); prints its size.
.PHONY: image
image:
	PYTHON=$(PYTHON) deploy/build-image.sh

bench:
	cargo bench --workspace

# The service against a bare gRPC echo, one run, loopback only (see `tablier bench-service -h`).
bench-service: stubs
	$(VENV)/bin/tablier bench-service $(BENCH_ARGS)

clean-stubs:
	rm -f service/tablier/v1/*_pb2*.py service/tablier/v1/*_pb2*.pyi service/tablier/v1/tablier.protoset
	rm -f clients/python/tablier_client/v1/*_pb2*.py clients/python/tablier_client/v1/*_pb2*.pyi \
		clients/python/tablier_client/v1/tablier.protoset clients/python/tablier_client/games.py
