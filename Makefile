# The two commands: `make serve` and `make test`. Both create .venv (python3 >= 3.11) if it
# is missing, install the package editable (maturin: incremental cargo builds in target/)
# and generate the Python gRPC stubs from proto/.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PROTOS := $(wildcard proto/tablier/v1/*.proto)

.PHONY: serve test bench install stubs clean-stubs

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "tablier needs python3 >= 3.11 (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e '.[dev]'

stubs: install
	$(PY) -m grpc_tools.protoc -I proto --python_out=service --pyi_out=service \
		--grpc_python_out=service $(PROTOS)

serve: stubs
	$(VENV)/bin/tablier serve

test: stubs
	cargo test --workspace --release
	$(PY) -m pytest

bench:
	cargo bench --workspace

clean-stubs:
	rm -f service/tablier/v1/*_pb2*.py service/tablier/v1/*_pb2*.pyi
