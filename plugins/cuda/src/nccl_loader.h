// NCCL (libnccl.so.2) opened at run time rather than linked, as cuBLASLt is
// (cublaslt_loader.h): the plugin loads on machines without NCCL, and only
// comm_create fails there (UNAVAILABLE, saying how to install it).
//
// NCCL's header is not needed to build: the few types and functions the
// collectives use are declared below with NCCL's C ABI (values and layouts
// of nccl.h, stable since NCCL 2.14; nccl_loader.cc checks them against
// nccl.h where that header is found). NCCL 2.14 or newer is required: the
// non-blocking communicator initialization (ncclCommInitRankConfig with
// config.blocking = 0), ncclCommFinalize, ncclAvg (2.10) and bfloat16 (2.10).
#ifndef PLEXUS_PLUGINS_CUDA_NCCL_LOADER_H_
#define PLEXUS_PLUGINS_CUDA_NCCL_LOADER_H_

#include <cuda_runtime_api.h>

#include <climits>
#include <cstddef>
#include <string>
#include <vector>

namespace plexus::cuda::nccl {

// ncclResult_t
using Result = int;
constexpr Result kSuccess = 0;
constexpr Result kUnhandledCudaError = 1;
constexpr Result kSystemError = 2;
constexpr Result kInternalError = 3;
constexpr Result kInvalidArgument = 4;
constexpr Result kInvalidUsage = 5;
constexpr Result kRemoteError = 6;
constexpr Result kInProgress = 7;

// ncclDataType_t
using DataType = int;
constexpr DataType kInt8 = 0;
constexpr DataType kUint8 = 1;
constexpr DataType kInt32 = 2;
constexpr DataType kUint32 = 3;
constexpr DataType kInt64 = 4;
constexpr DataType kUint64 = 5;
constexpr DataType kFloat16 = 6;
constexpr DataType kFloat32 = 7;
constexpr DataType kFloat64 = 8;
constexpr DataType kBfloat16 = 9;

// ncclRedOp_t
using RedOp = int;
constexpr RedOp kSum = 0;
constexpr RedOp kProd = 1;
constexpr RedOp kMax = 2;
constexpr RedOp kMin = 3;
constexpr RedOp kAvg = 4;

// ncclComm_t (opaque)
struct CommImpl;
using Comm = CommImpl*;

// ncclUniqueId: passed by value, 128 bytes.
constexpr size_t kUniqueIdBytes = 128;
struct UniqueId {
  char internal[kUniqueIdBytes];
};

// NCCL_VERSION(major, minor, patch) for NCCL 2.9 and newer.
constexpr int Version(int major, int minor, int patch) { return major * 10000 + minor * 100 + patch; }
constexpr int kMinimumVersion = Version(2, 14, 0);

// ncclConfig_t as NCCL 2.14 declared it (ncclConfig_v21400). NCCL reads a
// config by its `size` and `version`, giving the fields a later NCCL added
// their defaults, so this older, shorter layout stays valid for every NCCL
// since 2.14 (the common prefix is checked against nccl.h when found).
struct Config {
  size_t size = sizeof(Config);
  unsigned int magic = 0xcafebeef;           // NCCL_CONFIG_INITIALIZER's
  unsigned int version = Version(2, 14, 0);
  int blocking = INT_MIN;                    // NCCL_CONFIG_UNDEF_INT: NCCL's default
};

// The required functions (name, result, parameters).
#define PX_NCCL_FUNCTIONS(X)                                                                        \
  X(ncclGetVersion, Result, (int* version))                                                         \
  X(ncclGetErrorString, const char*, (Result result))                                               \
  X(ncclGetUniqueId, Result, (UniqueId* id))                                                        \
  X(ncclCommInitRankConfig, Result, (Comm* comm, int nranks, UniqueId id, int rank, Config* config)) \
  X(ncclCommGetAsyncError, Result, (Comm comm, Result* async_error))                                \
  X(ncclCommFinalize, Result, (Comm comm))                                                          \
  X(ncclCommDestroy, Result, (Comm comm))                                                           \
  X(ncclCommAbort, Result, (Comm comm))                                                             \
  X(ncclAllReduce, Result,                                                                          \
    (const void* send, void* recv, size_t count, DataType type, RedOp op, Comm comm,                \
     cudaStream_t stream))                                                                          \
  X(ncclAllGather, Result,                                                                          \
    (const void* send, void* recv, size_t send_count, DataType type, Comm comm,                     \
     cudaStream_t stream))                                                                          \
  X(ncclReduceScatter, Result,                                                                      \
    (const void* send, void* recv, size_t recv_count, DataType type, RedOp op, Comm comm,           \
     cudaStream_t stream))                                                                          \
  X(ncclBroadcast, Result,                                                                          \
    (const void* send, void* recv, size_t count, DataType type, int root, Comm comm,                \
     cudaStream_t stream))                                                                          \
  X(ncclSend, Result,                                                                               \
    (const void* send, size_t count, DataType type, int peer, Comm comm, cudaStream_t stream))      \
  X(ncclRecv, Result,                                                                               \
    (void* recv, size_t count, DataType type, int peer, Comm comm, cudaStream_t stream))            \
  X(ncclGroupStart, Result, ())                                                                     \
  X(ncclGroupEnd, Result, ())

// Resolved when present, else left null: the last error's details (2.13+).
#define PX_NCCL_OPTIONAL_FUNCTIONS(X) X(ncclGetLastError, const char*, (Comm comm))

struct Api {
#define PX_NCCL_MEMBER(name, result, params) result(*name) params = nullptr;
  PX_NCCL_FUNCTIONS(PX_NCCL_MEMBER)
  PX_NCCL_OPTIONAL_FUNCTIONS(PX_NCCL_MEMBER)
#undef PX_NCCL_MEMBER
  int version = 0;        // ncclGetVersion's code, e.g. 22809 for 2.28.9
  std::string library;    // the file opened
};

// The names tried, in order: $PX_CUDA_NCCL_LIBRARY (a path) when set, then
// "libnccl.so.2" (found through the loader's search path).
std::vector<std::string> DefaultLibraryNames();

// Opens the first of `candidates`, resolves every function into *api and
// checks the version. Returns "" on success, else why not (the library not
// found, a function missing, NCCL older than 2.14), with how to install it.
// Does not cache: see Loaded().
std::string Load(const std::vector<std::string>& candidates, Api* api);

// The process-wide table, loaded from DefaultLibraryNames() on the first call
// (thread-safe, once; never unloaded). Null when NCCL cannot be loaded: then
// *error (when not null) receives Load's message, on every call.
const Api* Loaded(std::string* error);

// "2.28.9" for a version code.
std::string VersionString(int code);

}  // namespace plexus::cuda::nccl

#endif  // PLEXUS_PLUGINS_CUDA_NCCL_LOADER_H_
