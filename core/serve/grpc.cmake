# Placeholder until the gRPC services land: the server speaks REST only.
set(PX_SERVE_GRPC OFF)
