"""Generated protobuf and gRPC stubs for tablier.v1 (grpcio-tools; not committed)."""
