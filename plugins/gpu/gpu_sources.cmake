# The sources the CUDA and ROCm plugins share (plugins/gpu/src): the device
# layer, the kernel classes and the device code of every kernel family both
# build. Not a plugin and not a library of its own: plugins/cuda/CMakeLists.txt
# and plugins/rocm/CMakeLists.txt include this file and compile the sources
# into their own MODULE, each with its own copy of the objects (nvcc and the
# C++ compiler for CUDA; hipcc and the C++ compiler against the HIP headers,
# with PX_GPU_HIP defined, for ROCm).
#
# Sets, with absolute paths:
#   PX_GPU_SOURCE_DIR      the include directory ("gpu_runtime.h", "kernels/...")
#   PX_GPU_HOST_SOURCES    the device layer and the kernel classes (.cc)
#   PX_GPU_DEVICE_SOURCES  the device code (.cu), written against gpu_portability.h
set(PX_GPU_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}/src)

# Each family's kernel classes (X.cc) next to its device code (X.cu) and its
# bridge (X_launch.h); the training kernels' classes (nn_grad.cc) have
# their device code in activation_grad.cu, xent.cu and pool_grad.cu. The elementwise family's device code is cut into
# several .cu files to keep each compile small.
set(PX_GPU_HOST_SOURCES
  gpu_device.cc
  gpu_error.cc
  gpu_stream.cc
  prepared_weight.cc
  kernels/elementwise.cc
  kernels/batchnorm.cc
  kernels/arg_reduce.cc
  kernels/optimizer.cc
  kernels/nn_grad.cc
  kernels/reduce.cc
  kernels/array.cc
  kernels/slice.cc
  kernels/pool.cc
  kernels/movement.cc
  # The native GEMM and convolutions (no vendor library): the ROCm plugin's
  # only ones; the CUDA plugin's with PX_CUDA_KERNELS=native, and its
  # convolutions when built without cuDNN's header.
  kernels/native_matmul.cc
  kernels/native_conv.cc)
set(PX_GPU_DEVICE_SOURCES
  kernels/unary.cu
  kernels/binary.cu
  kernels/unary_int.cu
  kernels/binary_int.cu
  kernels/compare.cu
  kernels/select.cu
  kernels/creation.cu
  kernels/batchnorm.cu
  kernels/arg_reduce.cu
  kernels/optimizer.cu
  kernels/activation_grad.cu
  kernels/xent.cu
  kernels/pool_grad.cu
  kernels/reduce.cu
  kernels/softmax.cu
  kernels/array.cu
  kernels/slice.cu
  kernels/pool.cu
  kernels/movement.cu
  kernels/gemm.cu
  kernels/conv_direct.cu)
list(TRANSFORM PX_GPU_HOST_SOURCES PREPEND ${PX_GPU_SOURCE_DIR}/)
list(TRANSFORM PX_GPU_DEVICE_SOURCES PREPEND ${PX_GPU_SOURCE_DIR}/)
