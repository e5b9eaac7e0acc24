# The two commands: `make serve` and `make test`. Both create .venv (python3 >= 3.11) if it
# is missing, install both distributions editable (the server through maturin: incremental
# cargo builds in target/; clients/python, the pure-Python tablier-client) and generate the
# Python gRPC stubs from proto/ (their builds do it too; `make stubs` redoes it in place).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
TOOLS  := .tools/bin
GHZ    := v0.93.0

.PHONY: serve test bench bench-service install stubs clean-stubs tools

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "tablier needs python3 >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e '.[dev]' -e 'clients/python[typing]'

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

test: stubs tools
	cargo test --workspace --release
	$(PY) -m pytest

# The TypeScript client and the web app (clients/web/dist, served by `tablier serve --web-listen`).
.PHONY: web
web:
	cd clients/web && npm ci --no-audit --no-fund && npm run build

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
