"""PEP 517 backend of the `tablier` distribution: maturin, after generating the Python
protobuf/gRPC stubs and the descriptor set from proto/ (grpcio-tools, a build requirement).

The stubs are generated, never committed: every build (`pip wheel .`, `pip install -e .`)
writes them into service/tablier/v1/ first, and `[tool.maturin] include` puts them in the
wheel (maturin would otherwise leave them out, as git-ignored files).

    python build_backend/tablier_build.py     # just the stubs (what `make stubs` runs)
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (the rest of the PEP 517 hooks, unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "proto"
OUT = ROOT / "service"
PACKAGE = OUT / "tablier" / "v1"
# ghz and other descriptor-driven tools: every tablier file and its imports, with comments.
PROTOSET = PACKAGE / "tablier.protoset"


def proto_files(root: Path) -> list[Path]:
    """The schema's files: proto/tablier/v1/*.proto (shared, package tablier.v1) and
    proto/tablier/<game>/v1/<game>.proto (package tablier.<game>.v1), sorted."""
    return sorted(root.glob("tablier/v1/*.proto")) + sorted(root.glob("tablier/*/v1/*.proto"))


def generate_stubs() -> list[Path]:
    """Writes `tablier/v1/*_pb2.py`, `*_pb2.pyi`, `*_pb2_grpc.py` and `tablier.protoset`
    into service/ from proto/tablier/**/*.proto; returns the proto files compiled.

    Every module lands flat in the one Python package `tablier.v1` (a game's
    `tablier/<game>/v1/<game>.proto` gives `tablier.v1.<game>_pb2`): the Python module path
    is the stubs' own layout, the proto package (`tablier.<game>.v1`) stays in the
    descriptors, which is what type URLs and reflection use."""
    import shutil
    import tempfile

    from grpc_tools import protoc

    protos = proto_files(PROTO_ROOT)
    if not protos:
        raise SystemExit(f"no .proto files under {PROTO_ROOT}")
    well_known = resources.files("grpc_tools") / "_proto"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--descriptor_set_out={PROTOSET}",
            "--include_imports",
            "--include_source_info",
            # Relative to -I, so the descriptors name the files `tablier/v1/<name>.proto` and
            # `tablier/<game>/v1/<game>.proto`, exactly as the tablier-client distribution's
            # copy does (one descriptor pool).
            *(str(p.relative_to(PROTO_ROOT)) for p in protos),
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed on " + " ".join(args[1:]))
        for old in PACKAGE.glob("*_pb2*.py*"):
            old.unlink()
        for src in sorted(tmp.glob("tablier/**/*_pb2*.py*")):
            if (PACKAGE / src.name).exists():
                raise SystemExit(f"two proto files generate {src.name}")
            shutil.copyfile(src, PACKAGE / src.name)
    return protos


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    generate_stubs()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    generate_stubs()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


if __name__ == "__main__":
    protos = generate_stubs()
    print(f"generated stubs for {len(protos)} proto files in {PACKAGE.relative_to(ROOT)}", file=sys.stderr)
