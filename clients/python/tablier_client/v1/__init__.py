"""Protobuf messages and the gRPC stub of `tablier.v1`, typed (mypy-protobuf), generated
from proto/ when the package is built. Proto comments are the docstrings of the `.pyi` files,
e.g. `qwirkle_pb2` tells how a tile type is numbered.

The descriptors are identical to the server's `tablier.v1` stubs, so both can be imported in
one process."""
