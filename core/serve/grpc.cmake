# plexus-serve's gRPC services (included by core/serve/CMakeLists.txt after
# the plexus_serve library): TensorFlow Serving's PredictionService and
# ModelService, KServe's GRPCInferenceService, on Debian's gRPC 1.51
# (libgrpc++-dev, protobuf-compiler-grpc).
#
# Sets PX_SERVE_GRPC ON and builds plexus_serve_grpc when gRPC is found;
# otherwise PX_SERVE_GRPC is OFF and the server speaks REST only.

set(PX_SERVE_GRPC OFF)

# Debian's gRPCConfig.cmake stops the configure with a FATAL_ERROR when the
# code generator plugins (protobuf-compiler-grpc) are not installed, so look
# for the C++ plugin first and only then for the package.
find_program(PX_GRPC_CPP_PLUGIN grpc_cpp_plugin)
if(PX_GRPC_CPP_PLUGIN)
  find_package(gRPC CONFIG QUIET)
endif()

if(NOT PX_GRPC_CPP_PLUGIN OR NOT TARGET gRPC::grpc++)
  message(STATUS "plexus-serve: gRPC not found (install libgrpc++-dev and protobuf-compiler-grpc); "
                 "the server speaks REST only")
  return()
endif()

# Protos under core/serve/proto; they import core/proto (tensor.proto,
# meta_graph.proto, example.proto) and tensorflow_serving/config (compiled
# into plexus_serve). Services get a .grpc.pb.cc too.
set(PX_SERVE_GRPC_PROTOS
  tensorflow_serving/apis/model
  tensorflow_serving/apis/status
  tensorflow_serving/apis/predict
  tensorflow_serving/apis/get_model_metadata
  tensorflow_serving/apis/get_model_status
  tensorflow_serving/apis/input
  tensorflow_serving/apis/classification
  tensorflow_serving/apis/regression
  tensorflow_serving/apis/inference
  tensorflow_serving/apis/model_management
  tensorflow_serving/apis/prediction_service
  tensorflow_serving/apis/model_service
  kserve/grpc_predict_v2)
set(PX_SERVE_GRPC_SERVICES
  tensorflow_serving/apis/prediction_service
  tensorflow_serving/apis/model_service
  kserve/grpc_predict_v2)

set(PX_SERVE_GRPC_SOURCES)
foreach(name ${PX_SERVE_GRPC_PROTOS})
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/proto/${name}.proto)
  set(outputs ${PX_SERVE_PROTO_OUT}/${name}.pb.cc ${PX_SERVE_PROTO_OUT}/${name}.pb.h)
  set(grpc_args)
  if(name IN_LIST PX_SERVE_GRPC_SERVICES)
    list(APPEND outputs ${PX_SERVE_PROTO_OUT}/${name}.grpc.pb.cc
                        ${PX_SERVE_PROTO_OUT}/${name}.grpc.pb.h)
    set(grpc_args --grpc_out=${PX_SERVE_PROTO_OUT} --plugin=protoc-gen-grpc=${PX_GRPC_CPP_PLUGIN})
    list(APPEND PX_SERVE_GRPC_SOURCES ${PX_SERVE_PROTO_OUT}/${name}.grpc.pb.cc)
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND protobuf::protoc -I ${CMAKE_CURRENT_SOURCE_DIR}/proto
            -I ${PROJECT_SOURCE_DIR}/core/proto
            --cpp_out=${PX_SERVE_PROTO_OUT} ${grpc_args} ${src}
    DEPENDS ${src} protobuf::protoc ${PX_GRPC_CPP_PLUGIN}
    COMMENT "protoc ${name}.proto")
  list(APPEND PX_SERVE_GRPC_SOURCES ${PX_SERVE_PROTO_OUT}/${name}.pb.cc)
endforeach()

add_library(plexus_serve_grpc STATIC
  ${PX_SERVE_GRPC_SOURCES}
  grpc_server.cc
  grpc_tfs_service.cc
  grpc_kserve_service.cc)
target_link_libraries(plexus_serve_grpc PUBLIC plexus_serve gRPC::grpc++)
target_compile_definitions(plexus_serve_grpc PRIVATE PLEXUS_SERVE_VERSION="${PROJECT_VERSION}")
target_compile_options(plexus_serve_grpc PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
# The generated code is not ours to warn about.
set_source_files_properties(${PX_SERVE_GRPC_SOURCES} PROPERTIES COMPILE_OPTIONS "-w")

set(PX_SERVE_GRPC ON)
message(STATUS "plexus-serve: gRPC ${gRPC_VERSION} (${PX_GRPC_CPP_PLUGIN}): "
               "TensorFlow Serving's and KServe's gRPC services")
