#!/opt/tablier/bin/python
"""The image's healthcheck: exit 0 when the server in this container answers SERVING on the
gRPC health service (grpc.health.v1, the overall service ""), 1 otherwise (NOT_SERVING while it
drains or while its database is unreachable; no answer within the deadline).

Plaintext, to 127.0.0.1 on TABLIER_LISTEN's port: with --tls-cert, check the health service from
outside instead (a Kubernetes gRPC probe is plaintext too)."""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    port = os.environ.get("TABLIER_LISTEN", "0.0.0.0:50051").rpartition(":")[2]
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=4)
        except grpc.RpcError as exc:
            print(f"health: {exc.code().name}: {exc.details()}")
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"health: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
