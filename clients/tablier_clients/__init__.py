"""gRPC-only clients of tablier: they import grpc and the generated `tablier.v1` stubs only,
so they need neither the Rust core nor PostgreSQL."""
