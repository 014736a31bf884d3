// C++ helpers for writing a whole plugin over the C ABI (header-only; the
// ABI itself stays C, see plexus/plugin_api.h and docs/plugin_abi.md).
//
// A plugin is two classes and one macro. The SDK fills the PX_PluginTable
// with trampolines that call the classes' methods, so the plugin never sees
// the table, struct sizes, version negotiation or exceptions crossing the ABI:
//
//   #include "plexus/sdk/plugin.h"
//   namespace sdk = plexus::sdk;
//
//   struct MyStream { sdk::StickyStatus error; };  // plain types, no base
//   struct MyEvent { std::mutex mu; sdk::SavedStatus status; };
//
//   class MyDevice : public sdk::Device {
//    public:
//     using Stream = MyStream;
//     using Event = MyEvent;
//     using sdk::Device::Device;  // MyDevice(const sdk::Plugin&, int32_t ordinal)
//     PX_Status* Allocate(size_t bytes, size_t alignment, void** out);
//     void Deallocate(void* ptr);
//     PX_Status* MemcpyH2D(void* dst, const void* src, size_t bytes);
//     ...  // the other required methods, listed below
//   };
//
//   class MyPlugin : public sdk::Plugin {
//    public:
//     using Device = MyDevice;
//     using sdk::Plugin::Plugin;  // MyPlugin(const sdk::PluginContext&)
//     PX_Status* RegisterKernels(PX_KernelRegistrar* registrar);
//     PX_Status* DeviceCount(int32_t* count) { *count = 1; return nullptr; }
//     PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo* info);
//     PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<MyDevice>* out) {
//       *out = std::make_unique<MyDevice>(*this, ordinal);
//       return nullptr;
//     }
//   };
//
//   constexpr sdk::PluginInfo kInfo{"myhw", "0.1.0", "MyHW", "MYHW", kDLExtDev};
//   PX_SDK_DEFINE_PLUGIN(MyPlugin, kInfo)
//
// What the SDK does for you (sdk::internal::Initialize below):
// - exports PX_PluginProbe and PX_PluginInitialize (C linkage);
// - refuses hosts whose services are unusable, negotiates the ABI minor with
//   px_sdk_negotiate, and reads PX_HostInitArgs fields only when present;
// - fills the table from a full local copy, writing no byte past the host's
//   struct_size and lowering the table's struct_size to the plugin's own
//   sizeof when the host's is larger (a newer host);
// - leaves an optional slot NULL unless the device class has the method;
// - catches every exception in every slot: sdk::Error keeps its code,
//   std::bad_alloc becomes RESOURCE_EXHAUSTED, anything else INTERNAL;
// - checks the arguments the contract fixes before calling you: device
//   ordinals against DeviceCount (INVALID_ARGUMENT), null out-pointers,
//   alignment (0 becomes 64; not a power of two is INVALID_ARGUMENT),
//   deallocate(NULL) and zero-byte copies (no call), null pointers of
//   synchronous copies (asynchronous ones reach you, so that you can make
//   the failure the stream's sticky error too);
// - owns what it hands out: PX_Device*, PX_Stream* and PX_Event* are your
//   objects (get them back with sdk::HandleCast), deleted on close/destroy,
//   and the plugin object is deleted at plugin_shutdown.
//
// The methods the SDK calls. Every PX_Status* method returns NULL for OK or a
// status made through the host (Error(), sdk::MakeError, PX_SDK_VENDOR_CALL),
// and may also throw instead.
//
//   Plugin class P (derives from sdk::Plugin; one object per process):
//     using Device = D;
//     P(const sdk::PluginContext&);                                 // may throw to refuse
//     PX_Status* RegisterKernels(PX_KernelRegistrar*);              // sdk::RegisterKernel (kernel.h)
//     PX_Status* DeviceCount(int32_t* count);                       // 0 when no hardware
//     PX_Status* GetDeviceInfo(int32_t ordinal, PX_DeviceInfo*);   // a zeroed full-size struct
//     PX_Status* OpenDevice(int32_t ordinal, std::unique_ptr<D>*);
//   optional:
//     const PX_CollectivesExt* Collectives();  // ABI 0.7: a static table, or
//                                              // NULL; without it: none
//
//   Device class D (derives from sdk::Device), required:
//     using Stream = S; using Event = E;                            // any classes
//     PX_Status* Allocate(size_t bytes, size_t alignment, void** out);
//     void Deallocate(void* ptr);                                   // never called with NULL
//     PX_Status* MemcpyH2D(void* dst, const void* src, size_t bytes);   // also D2H, D2D
//     PX_Status* StreamSynchronize(S&);  PX_Status* StreamGetStatus(S&);
//     PX_Status* EventRecord(S&, E&);    PX_Status* EventSynchronize(E&);
//     PX_Status* StreamWaitEvent(S&, E&);
//   optional (the slot stays NULL without it):
//     PX_Status* StreamCreate(std::unique_ptr<S>*);  // default: std::make_unique<S>()
//     PX_Status* EventCreate(std::unique_ptr<E>*);   // default: std::make_unique<E>()
//     PX_Status* HostAllocate(size_t bytes, void** out); void HostDeallocate(void* ptr);
//     PX_Status* MemoryStats(PX_MemoryStats*);       // a zeroed full-size struct
//     PX_Status* MemcpyH2DAsync(S&, void* dst, const void* src, size_t bytes);  // D2H, D2D
//     PX_Status* StreamAddCallback(S&, PX_HostCallbackFn fn, void* arg);
//     PX_Status* StreamNativeHandle(S&, uint64_t* out);    // ABI 0.8, with
//     PX_Status* NativeStreamWait(uint64_t native, S&);    // both or neither
//   Do not overload these names: the SDK detects each method by its name.
//
// Kernels are written with plexus/sdk/kernel.h (sdk::OpKernel) and registered
// from RegisterKernels with sdk::RegisterKernel; a kernel reaches its stream
// object with sdk::HandleCast<S>(call.stream()).
//
// Errors from vendor libraries that return error codes:
//
//   PX_SDK_VENDOR_CALL(host(), cudaMalloc(&p, n), cudaSuccess, cudaGetErrorString);
//
// returns from the enclosing function (which returns PX_Status*) with
// "my_device.cc:42: cudaMalloc(&p, n) failed: out of memory (code 2)" when the
// call does not return cudaSuccess. The code is INTERNAL unless
// sdk::VendorErrorTraits<cudaError_t> is specialized to map some codes (out
// of memory: RESOURCE_EXHAUSTED); PX_SDK_VENDOR_CALL_MAPPED takes the mapping
// as an argument instead.
#ifndef PLEXUS_SDK_PLUGIN_H_
#define PLEXUS_SDK_PLUGIN_H_

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "plexus/plugin_api.h"
#include "plexus/sdk/error.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::sdk {

// ---------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------

namespace internal {
inline std::string VFormat(const char* format, va_list args) {
  char buffer[1024];
  vsnprintf(buffer, sizeof(buffer), format, args);
  return buffer;
}
}  // namespace internal

// A printf-style status made through the host, or NULL (OK) for PX_CODE_OK
// (the host would read a non-NULL OK status as UNKNOWN).
inline PX_Status* MakeError(const PX_HostServices* host, PX_Code code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
inline PX_Status* MakeError(const PX_HostServices* host, PX_Code code, const char* format, ...) {
  if (code == PX_CODE_OK) return nullptr;
  va_list args;
  va_start(args, format);
  std::string message = internal::VFormat(format, args);
  va_end(args);
  return host->status_create(code, message.c_str());
}

// Owns a PX_Status* (NULL: OK) and destroys it through the host unless it
// was released. Move-only. Use it for statuses a plugin looks at and may drop
// (an optional attribute's NOT_FOUND); release() the one you return.
class Status {
 public:
  Status() noexcept = default;
  // Takes ownership of `status` (may be NULL).
  Status(const PX_HostServices* host, PX_Status* status) noexcept : host_(host), status_(status) {}
  Status(Status&& other) noexcept : host_(other.host_), status_(other.status_) {
    other.status_ = nullptr;
  }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      reset();
      host_ = other.host_;
      status_ = other.status_;
      other.status_ = nullptr;
    }
    return *this;
  }
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  ~Status() { reset(); }

  // A status with a printf-style message (OK, holding nothing, for PX_CODE_OK).
  static Status Make(const PX_HostServices* host, PX_Code code, const char* format, ...)
      __attribute__((format(printf, 3, 4))) {
    if (code == PX_CODE_OK) return Status(host, nullptr);
    va_list args;
    va_start(args, format);
    std::string message = internal::VFormat(format, args);
    va_end(args);
    return Status(host, host->status_create(code, message.c_str()));
  }

  bool ok() const { return status_ == nullptr; }
  PX_Code code() const { return ok() ? PX_CODE_OK : host_->status_code(status_); }
  // Borrowed from the status; "" when OK.
  const char* message() const {
    if (ok()) return "";
    const char* m = host_->status_message(status_);
    return m != nullptr ? m : "";
  }
  const PX_Status* get() const { return status_; }
  const PX_HostServices* host() const { return host_; }
  // Gives up ownership: return the result across the ABI.
  PX_Status* release() noexcept {
    PX_Status* s = status_;
    status_ = nullptr;
    return s;
  }
  void reset() noexcept {
    if (status_ != nullptr) host_->status_destroy(status_);
    status_ = nullptr;
  }

 private:
  const PX_HostServices* host_ = nullptr;
  PX_Status* status_ = nullptr;
};

inline Status MakeStatus(const PX_HostServices* host, PX_Code code, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
inline Status MakeStatus(const PX_HostServices* host, PX_Code code, const char* format, ...) {
  if (code == PX_CODE_OK) return Status(host, nullptr);
  va_list args;
  va_start(args, format);
  std::string message = internal::VFormat(format, args);
  va_end(args);
  return Status(host, host->status_create(code, message.c_str()));
}

namespace internal {
inline PX_Status* TakeRaw(PX_Status* status) { return status; }
inline PX_Status* TakeRaw(Status&& status) { return status.release(); }
}  // namespace internal

// Returns the status from the enclosing function (which returns PX_Status*)
// when `expr` (a PX_Status* or an sdk::Status rvalue) is not OK.
#define PX_SDK_RETURN_IF_ERROR(expr)                                                    \
  do {                                                                                  \
    if (PX_Status* px_sdk_status_ = ::plexus::sdk::internal::TakeRaw(expr)) {           \
      return px_sdk_status_;                                                            \
    }                                                                                   \
  } while (0)

// A status kept by value (code and message). Statuses belong to whoever
// receives them, so a stream or event that must report the same error more
// than once keeps it this way and makes a fresh PX_Status each time.
struct SavedStatus {
  PX_Code code = PX_CODE_OK;
  std::string message;

  bool ok() const { return code == PX_CODE_OK; }
  // Copies a (borrowed) status; NULL reads as OK.
  static SavedStatus From(const PX_HostServices* host, const PX_Status* status) {
    SavedStatus s;
    if (status == nullptr) return s;
    s.code = host->status_code(status);
    if (s.code == PX_CODE_OK) s.code = PX_CODE_UNKNOWN;  // non-NULL is never OK
    const char* m = host->status_message(status);
    s.message = m != nullptr ? m : "";
    return s;
  }
  // A new status owned by the caller, or NULL when OK.
  PX_Status* ToStatus(const PX_HostServices* host) const {
    return ok() ? nullptr : host->status_create(code, message.c_str());
  }
};

// The first error of the work on a stream ("sticky"), safe to use from
// several threads: later errors are dropped so that the report names the
// cause, not a consequence.
class StickyStatus {
 public:
  // Records a copy of `status` (borrowed; NULL is ignored) unless an error
  // is already recorded. Returns true when this error was recorded.
  bool Record(const PX_HostServices* host, const PX_Status* status) {
    if (status == nullptr) return false;
    return Record(SavedStatus::From(host, status));
  }
  bool Record(SavedStatus status) {
    if (status.ok()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_.ok()) return false;
    status_ = std::move(status);
    return true;
  }
  bool ok() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_.ok();
  }
  SavedStatus Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  // A fresh status for the recorded error (owned by the caller), or NULL.
  PX_Status* Report(const PX_HostServices* host) const { return Get().ToStatus(host); }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = SavedStatus();
  }

 private:
  mutable std::mutex mu_;
  SavedStatus status_;
};

// sdk::Error (error.h) is the exception to throw from plugin and device
// methods: the SDK's trampolines turn it into a status with its code. It is
// also what kernel.h's PX_SDK_CHECK throws, so a check in a table method
// keeps its code too; any other exception becomes INTERNAL.

// Throws sdk::Error with a printf-style message.
[[noreturn]] inline void ThrowError(PX_Code code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
[[noreturn]] inline void ThrowError(PX_Code code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = internal::VFormat(format, args);
  va_end(args);
  throw Error(code, std::move(message));
}

// ---------------------------------------------------------------------------
// Vendor error codes
// ---------------------------------------------------------------------------

// How a failed vendor call's code maps to a PX_Code: INTERNAL unless
// specialized for the vendor's code type, for example
//
//   template <> struct plexus::sdk::VendorErrorTraits<cudaError_t> {
//     static PX_Code ToPxCode(cudaError_t e) {
//       return e == cudaErrorMemoryAllocation ? PX_CODE_RESOURCE_EXHAUSTED
//                                             : PX_CODE_INTERNAL;
//     }
//   };
//
// (declare the specialization before the first PX_SDK_VENDOR_CALL on that type).
template <typename Code>
struct VendorErrorTraits {
  static PX_Code ToPxCode(Code) { return PX_CODE_INTERNAL; }
};

namespace internal {
// The file name without its folders: messages name "my_device.cc", not a
// path of the build machine.
inline const char* BaseName(const char* path) {
  const char* base = path;
  for (const char* p = path; *p != '\0'; ++p) {
    if (*p == '/' || *p == '\\') base = p + 1;
  }
  return base;
}
inline std::string DescriptionString(const char* s) { return s != nullptr ? s : "unknown error"; }
inline std::string DescriptionString(const std::string& s) { return s; }
}  // namespace internal

// The status of a failed vendor call: "FILE:LINE: EXPR failed: DESCRIPTION
// (code N)". `describe(code)` returns const char* or std::string.
template <typename Code, typename Describe>
PX_Status* VendorError(const PX_HostServices* host, PX_Code px_code, const char* file, int line,
                       const char* expr, Code code, Describe&& describe) {
  std::string description;
  try {
    description = internal::DescriptionString(describe(code));
  } catch (...) {
    description = "unknown error";
  }
  if (px_code == PX_CODE_OK) px_code = PX_CODE_UNKNOWN;
  return MakeError(host, px_code, "%s:%d: %s failed: %s (code %lld)", internal::BaseName(file),
                   line, expr, description.c_str(), static_cast<long long>(code));
}

// Evaluates `expr` (a vendor call returning an error code) and, when the
// result differs from `ok_value`, returns the status from the enclosing
// function (which returns PX_Status*). The PX_Code comes from
// VendorErrorTraits of the code's type.
#define PX_SDK_VENDOR_CALL(host, expr, ok_value, describe_fn)                                  \
  do {                                                                                         \
    const auto px_sdk_code_ = (expr);                                                          \
    if (px_sdk_code_ != (ok_value)) {                                                          \
      return ::plexus::sdk::VendorError(                                                       \
          (host),                                                                              \
          ::plexus::sdk::VendorErrorTraits<std::decay_t<decltype(px_sdk_code_)>>::ToPxCode(    \
              px_sdk_code_),                                                                   \
          __FILE__, __LINE__, #expr, px_sdk_code_, (describe_fn));                             \
    }                                                                                          \
  } while (0)

// The same with an explicit mapping: `map_fn(code)` returns the PX_Code.
#define PX_SDK_VENDOR_CALL_MAPPED(host, expr, ok_value, describe_fn, map_fn)                   \
  do {                                                                                         \
    const auto px_sdk_code_ = (expr);                                                          \
    if (px_sdk_code_ != (ok_value)) {                                                          \
      return ::plexus::sdk::VendorError((host), (map_fn)(px_sdk_code_), __FILE__, __LINE__,    \
                                        #expr, px_sdk_code_, (describe_fn));                   \
    }                                                                                          \
  } while (0)

// For code that cannot return a status (kernels, constructors): throws
// sdk::Error with the same message instead.
#define PX_SDK_VENDOR_CHECK(host, expr, ok_value, describe_fn)                                 \
  do {                                                                                         \
    const auto px_sdk_code_ = (expr);                                                          \
    if (px_sdk_code_ != (ok_value)) {                                                          \
      ::plexus::sdk::Status px_sdk_status_(                                                    \
          (host),                                                                              \
          ::plexus::sdk::VendorError(                                                          \
              (host),                                                                          \
              ::plexus::sdk::VendorErrorTraits<std::decay_t<decltype(px_sdk_code_)>>::ToPxCode( \
                  px_sdk_code_),                                                               \
              __FILE__, __LINE__, #expr, px_sdk_code_, (describe_fn)));                        \
      throw ::plexus::sdk::Error(px_sdk_status_.code(), px_sdk_status_.message());             \
    }                                                                                          \
  } while (0)

// ---------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------

// The plugin's object behind an opaque handle it handed out, and back:
//   MyStream* s = sdk::HandleCast<MyStream>(px_stream);
//   PX_Stream* h = sdk::ToHandle<PX_Stream>(s);
// (The SDK's table hands out exactly these pointers, so the casts are exact.)
template <typename T>
T* HandleCast(PX_Device* handle) {
  return reinterpret_cast<T*>(handle);
}
template <typename T>
T* HandleCast(PX_Stream* handle) {
  return reinterpret_cast<T*>(handle);
}
template <typename T>
T* HandleCast(PX_Event* handle) {
  return reinterpret_cast<T*>(handle);
}
template <typename Handle, typename T>
Handle* ToHandle(T* object) {
  static_assert(std::is_same_v<Handle, PX_Device> || std::is_same_v<Handle, PX_Stream> ||
                    std::is_same_v<Handle, PX_Event>,
                "ToHandle makes PX_Device*, PX_Stream* or PX_Event*");
  return reinterpret_cast<Handle*>(object);
}

// Owns a vendor resource and releases it with Destroy (any function taking
// the handle; its result is ignored), like std::unique_ptr for C handles:
//   sdk::UniqueHandle<cudaStream_t, cudaStreamDestroy> stream;
//   PX_SDK_VENDOR_CALL(host(), cudaStreamCreate(stream.out()), cudaSuccess, cudaGetErrorString);
template <typename T, auto Destroy>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(T handle) : handle_(handle), owned_(true) {}
  UniqueHandle(UniqueHandle&& other) noexcept
      : handle_(other.handle_), owned_(std::exchange(other.owned_, false)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = other.handle_;
      owned_ = std::exchange(other.owned_, false);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return owned_; }
  // For creation functions that write the handle through a pointer: releases
  // what is held and marks the new value as owned.
  T* out() {
    reset();
    owned_ = true;
    return &handle_;
  }
  T release() {
    owned_ = false;
    return handle_;
  }
  void reset() {
    if (owned_) (void)Destroy(handle_);
    owned_ = false;
  }

 private:
  T handle_{};
  bool owned_ = false;
};

// Copies `full` into a struct the other side allocated, writing no byte
// beyond that struct's struct_size (an older host has a shorter struct) and
// leaving its struct_size as it was set.
template <typename T>
void FillSized(T* out, const T& full) {
  const size_t size = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
  const size_t skip = sizeof(out->struct_size);
  if (size > skip) {
    std::memcpy(reinterpret_cast<char*>(out) + skip, reinterpret_cast<const char*>(&full) + skip,
                size - skip);
  }
}

// Copies a C string into a fixed char array (PX_DeviceInfo's name and
// vendor), cutting it and always terminating it.
template <size_t N>
void CopyString(char (&dst)[N], const char* src) {
  static_assert(N > 0, "empty array");
  size_t n = src != nullptr ? std::strlen(src) : 0;
  if (n > N - 1) n = N - 1;
  if (n > 0) std::memcpy(dst, src, n);
  dst[n] = '\0';
}

// ---------------------------------------------------------------------------
// The plugin and device base classes
// ---------------------------------------------------------------------------

// What the plugin says about itself. Strings must be static.
struct PluginInfo {
  const char* name;              // the plugin's name, e.g. "myhw"
  const char* version;           // free-form, e.g. "0.1.0"
  const char* platform;          // e.g. "CUDA"
  const char* device_type;       // upper case: "MYHW" makes devices MYHW:0, ...
  int32_t dlpack_device_type;    // DLDeviceType of the device's memory
  int32_t score = 0;             // higher ranks first; negative: never the default
  uint32_t abi_min_minor = 0;    // the ABI minors of PX_ABI_VERSION_MAJOR spoken
  uint32_t abi_max_minor = PX_ABI_VERSION_MINOR;
};

// What the host said at initialization.
struct PluginContext {
  const PX_HostServices* host = nullptr;  // valid until the plugin is unloaded
  PluginInfo info{};
  uint32_t abi_minor = 0;            // the negotiated minor
  bool synchronous_debug = false;    // finish every launch inside compute
  std::string plugin_path;           // the file the plugin was loaded from
};

namespace internal {
inline void VLog(const PX_HostServices* host, PX_LogLevel level, const char* format, va_list args) {
  if (host == nullptr || host->log == nullptr) return;
  std::string message = VFormat(format, args);
  host->log(host->host_context, level, message.c_str());
}
}  // namespace internal

// Base of the plugin class: the host services and helpers.
class Plugin {
 public:
  explicit Plugin(const PluginContext& context) : context_(context) {}
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  const PX_HostServices* host() const { return context_.host; }
  const char* name() const { return context_.info.name; }
  const PluginContext& context() const { return context_; }

  // A status owned by the caller (NULL for PX_CODE_OK).
  PX_Status* Error(PX_Code code, const char* format, ...) const __attribute__((format(printf, 3, 4))) {
    if (code == PX_CODE_OK) return nullptr;
    va_list args;
    va_start(args, format);
    std::string message = internal::VFormat(format, args);
    va_end(args);
    return host()->status_create(code, message.c_str());
  }
  // Logged by the host, attributed to this plugin.
  void Log(PX_LogLevel level, const char* format, ...) const __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, format);
    internal::VLog(host(), level, format, args);
    va_end(args);
  }

 private:
  PluginContext context_;
};

// Base of the device class: what every device method needs at hand.
class Device {
 public:
  Device(const Plugin& plugin, int32_t ordinal)
      : host_(plugin.host()), plugin_name_(plugin.name()), ordinal_(ordinal) {}
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const PX_HostServices* host() const { return host_; }
  const char* plugin_name() const { return plugin_name_; }
  int32_t ordinal() const { return ordinal_; }

  PX_Status* Error(PX_Code code, const char* format, ...) const __attribute__((format(printf, 3, 4))) {
    if (code == PX_CODE_OK) return nullptr;
    va_list args;
    va_start(args, format);
    std::string message = internal::VFormat(format, args);
    va_end(args);
    return host_->status_create(code, message.c_str());
  }
  void Log(PX_LogLevel level, const char* format, ...) const __attribute__((format(printf, 3, 4))) {
    va_list args;
    va_start(args, format);
    internal::VLog(host_, level, format, args);
    va_end(args);
  }

 private:
  const PX_HostServices* host_;
  const char* plugin_name_;
  int32_t ordinal_;
};

// ---------------------------------------------------------------------------
// The table: trampolines from the C slots to the classes
// ---------------------------------------------------------------------------

namespace internal {

// Runs body (returning PX_Status*) and turns any exception into a status.
template <typename Body>
PX_Status* Guarded(const PX_HostServices* host, const char* plugin, const char* slot,
                   Body&& body) noexcept {
  try {
    return body();
  } catch (const ::plexus::sdk::Error& e) {
    return host->status_create(e.code() == PX_CODE_OK ? PX_CODE_UNKNOWN : e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED, "%s: out of host memory in the %s plugin",
                        slot, plugin);
  } catch (const std::exception& e) {
    return px_sdk_error(host, PX_CODE_INTERNAL, "%s: unexpected exception in the %s plugin: %s",
                        slot, plugin, e.what());
  } catch (...) {
    return px_sdk_error(host, PX_CODE_INTERNAL, "%s: unexpected exception in the %s plugin", slot,
                        plugin);
  }
}

// For slots without a status (close, destroy, deallocate): an exception is
// logged as an error and swallowed.
template <typename Body>
void GuardedVoid(const PX_HostServices* host, const char* plugin, const char* slot,
                 Body&& body) noexcept {
  try {
    body();
  } catch (const std::exception& e) {
    if (host != nullptr && host->log != nullptr) {
      std::string m = std::string(slot) + ": exception ignored: " + e.what();
      host->log(host->host_context, PX_LOG_ERROR, m.c_str());
    }
  } catch (...) {
    if (host != nullptr && host->log != nullptr) {
      std::string m = std::string(slot) + ": exception ignored";
      host->log(host->host_context, PX_LOG_ERROR, m.c_str());
    }
  }
  (void)plugin;
}

// Detection of the optional methods (by name).
#define PX_SDK_DETECT_METHOD_(trait, method)                                          \
  template <typename T, typename = void>                                              \
  struct trait : std::false_type {};                                                  \
  template <typename T>                                                               \
  struct trait<T, std::void_t<decltype(&T::method)>> : std::true_type {}
PX_SDK_DETECT_METHOD_(HasStreamCreate, StreamCreate);
PX_SDK_DETECT_METHOD_(HasEventCreate, EventCreate);
PX_SDK_DETECT_METHOD_(HasHostAllocate, HostAllocate);
PX_SDK_DETECT_METHOD_(HasHostDeallocate, HostDeallocate);
PX_SDK_DETECT_METHOD_(HasMemoryStats, MemoryStats);
PX_SDK_DETECT_METHOD_(HasMemcpyH2DAsync, MemcpyH2DAsync);
PX_SDK_DETECT_METHOD_(HasMemcpyD2HAsync, MemcpyD2HAsync);
PX_SDK_DETECT_METHOD_(HasMemcpyD2DAsync, MemcpyD2DAsync);
PX_SDK_DETECT_METHOD_(HasStreamAddCallback, StreamAddCallback);
PX_SDK_DETECT_METHOD_(HasStreamCapture, StreamCaptureBegin);
PX_SDK_DETECT_METHOD_(HasCollectives, Collectives);
PX_SDK_DETECT_METHOD_(HasStreamNativeHandle, StreamNativeHandle);
PX_SDK_DETECT_METHOD_(HasNativeStreamWait, NativeStreamWait);
#undef PX_SDK_DETECT_METHOD_

constexpr size_t kDefaultAlignment = 64;

template <typename P>
struct Table {
  using D = typename P::Device;
  using S = typename D::Stream;
  using E = typename D::Event;
  static_assert(std::is_base_of_v<Plugin, P>, "the plugin class must derive from sdk::Plugin");
  static_assert(std::is_base_of_v<Device, D>, "the device class must derive from sdk::Device");
  static_assert(HasHostAllocate<D>::value == HasHostDeallocate<D>::value,
                "implement both HostAllocate and HostDeallocate, or neither");

  static P* Plug(void* plugin) { return static_cast<P*>(plugin); }
  static D* Dev(PX_Device* device) { return HandleCast<D>(device); }

  // -- plugin ---------------------------------------------------------------

  static void Shutdown(void* plugin) noexcept {
    P* p = Plug(plugin);
    const PX_HostServices* host = p->host();
    GuardedVoid(host, "plugin", "plugin_shutdown", [&] { delete p; });
  }

  static PX_Status* RegisterKernels(void* plugin, PX_KernelRegistrar* registrar) noexcept {
    P* p = Plug(plugin);
    return Guarded(p->host(), p->name(), "register_kernels",
                   [&] { return p->RegisterKernels(registrar); });
  }

  static PX_Status* DeviceCount(void* plugin, int32_t* out_count) noexcept {
    P* p = Plug(plugin);
    return Guarded(p->host(), p->name(), "device_count", [&]() -> PX_Status* {
      if (out_count == nullptr) {
        return p->Error(PX_CODE_INVALID_ARGUMENT, "device_count: out_count is null");
      }
      int32_t count = 0;
      PX_SDK_RETURN_IF_ERROR(p->DeviceCount(&count));
      *out_count = count < 0 ? 0 : count;
      return nullptr;
    });
  }

  // INVALID_ARGUMENT unless 0 <= ordinal < DeviceCount.
  static PX_Status* CheckOrdinal(P* p, int32_t ordinal) {
    int32_t count = 0;
    PX_SDK_RETURN_IF_ERROR(p->DeviceCount(&count));
    if (ordinal < 0 || ordinal >= count) {
      return p->Error(PX_CODE_INVALID_ARGUMENT,
                      "device ordinal %d is out of range: the %s plugin has %d device(s)",
                      static_cast<int>(ordinal), p->name(), static_cast<int>(count));
    }
    return nullptr;
  }

  static PX_Status* DeviceGetInfo(void* plugin, int32_t ordinal, PX_DeviceInfo* out_info) noexcept {
    P* p = Plug(plugin);
    return Guarded(p->host(), p->name(), "device_get_info", [&]() -> PX_Status* {
      if (out_info == nullptr) {
        return p->Error(PX_CODE_INVALID_ARGUMENT, "device_get_info: out_info is null");
      }
      PX_SDK_RETURN_IF_ERROR(CheckOrdinal(p, ordinal));
      PX_DeviceInfo info;
      std::memset(&info, 0, sizeof(info));
      info.struct_size = sizeof(info);
      PX_SDK_RETURN_IF_ERROR(p->GetDeviceInfo(ordinal, &info));
      info.name[sizeof(info.name) - 1] = '\0';
      info.vendor[sizeof(info.vendor) - 1] = '\0';
      FillSized(out_info, info);
      return nullptr;
    });
  }

  static PX_Status* DeviceOpen(void* plugin, int32_t ordinal, PX_Device** out_device) noexcept {
    P* p = Plug(plugin);
    return Guarded(p->host(), p->name(), "device_open", [&]() -> PX_Status* {
      if (out_device == nullptr) {
        return p->Error(PX_CODE_INVALID_ARGUMENT, "device_open: out_device is null");
      }
      PX_SDK_RETURN_IF_ERROR(CheckOrdinal(p, ordinal));
      std::unique_ptr<D> device;
      PX_SDK_RETURN_IF_ERROR(p->OpenDevice(ordinal, &device));
      if (device == nullptr) {
        return p->Error(PX_CODE_INTERNAL, "device_open: OpenDevice(%d) returned no device",
                        static_cast<int>(ordinal));
      }
      *out_device = ToHandle<PX_Device>(device.release());
      return nullptr;
    });
  }

  static void DeviceClose(void* plugin, PX_Device* device) noexcept {
    P* p = Plug(plugin);
    if (device == nullptr) return;
    GuardedVoid(p->host(), p->name(), "device_close", [&] { delete Dev(device); });
  }

  // -- memory ---------------------------------------------------------------

  static PX_Status* Allocate(PX_Device* device, size_t bytes, size_t alignment,
                             void** out_ptr) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "allocate", [&]() -> PX_Status* {
      if (out_ptr == nullptr) return d->Error(PX_CODE_INVALID_ARGUMENT, "allocate: out_ptr is null");
      if (alignment == 0) alignment = kDefaultAlignment;
      if ((alignment & (alignment - 1)) != 0) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "allocate: alignment %zu is not a power of two",
                        alignment);
      }
      void* ptr = nullptr;
      PX_SDK_RETURN_IF_ERROR(d->Allocate(bytes, alignment, &ptr));
      *out_ptr = ptr;
      return nullptr;
    });
  }

  static void Deallocate(PX_Device* device, void* ptr) noexcept {
    if (ptr == nullptr) return;
    D* d = Dev(device);
    GuardedVoid(d->host(), d->plugin_name(), "deallocate", [&] { d->Deallocate(ptr); });
  }

  static PX_Status* HostAllocate(PX_Device* device, size_t bytes, void** out_ptr) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "host_allocate", [&]() -> PX_Status* {
      if (out_ptr == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "host_allocate: out_ptr is null");
      }
      void* ptr = nullptr;
      PX_SDK_RETURN_IF_ERROR(d->HostAllocate(bytes, &ptr));
      *out_ptr = ptr;
      return nullptr;
    });
  }

  static void HostDeallocate(PX_Device* device, void* ptr) noexcept {
    if (ptr == nullptr) return;
    D* d = Dev(device);
    GuardedVoid(d->host(), d->plugin_name(), "host_deallocate", [&] { d->HostDeallocate(ptr); });
  }

  static PX_Status* MemoryStats(PX_Device* device, PX_MemoryStats* out_stats) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "memory_stats", [&]() -> PX_Status* {
      if (out_stats == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "memory_stats: out_stats is null");
      }
      PX_MemoryStats stats;
      std::memset(&stats, 0, sizeof(stats));
      stats.struct_size = sizeof(stats);
      PX_SDK_RETURN_IF_ERROR(d->MemoryStats(&stats));
      FillSized(out_stats, stats);
      return nullptr;
    });
  }

  // The contract's checks of a copy: zero bytes is done; null pointers for
  // more are refused.
  static PX_Status* CheckCopy(D* d, const char* slot, void* dst, const void* src, size_t bytes,
                              bool* done) {
    *done = bytes == 0;
    if (bytes != 0 && (dst == nullptr || src == nullptr)) {
      return d->Error(PX_CODE_INVALID_ARGUMENT, "%s of %zu bytes with a null %s pointer", slot,
                      bytes, dst == nullptr ? "destination" : "source");
    }
    return nullptr;
  }

  enum class Dir { kH2D, kD2H, kD2D };
  static constexpr const char* SlotName(Dir dir, bool async) {
    return dir == Dir::kH2D ? (async ? "memcpy_h2d_async" : "memcpy_h2d")
           : dir == Dir::kD2H ? (async ? "memcpy_d2h_async" : "memcpy_d2h")
                              : (async ? "memcpy_d2d_async" : "memcpy_d2d");
  }

  template <Dir dir>
  static PX_Status* Memcpy(PX_Device* device, void* dst, const void* src, size_t bytes) noexcept {
    D* d = Dev(device);
    constexpr const char* slot = SlotName(dir, false);
    return Guarded(d->host(), d->plugin_name(), slot, [&]() -> PX_Status* {
      bool done = false;
      PX_SDK_RETURN_IF_ERROR(CheckCopy(d, slot, dst, src, bytes, &done));
      if (done) return nullptr;
      if constexpr (dir == Dir::kH2D) {
        return d->MemcpyH2D(dst, src, bytes);
      } else if constexpr (dir == Dir::kD2H) {
        return d->MemcpyD2H(dst, src, bytes);
      } else {
        return d->MemcpyD2D(dst, src, bytes);
      }
    });
  }

  template <Dir dir>
  static PX_Status* MemcpyAsync(PX_Device* device, PX_Stream* stream, void* dst, const void* src,
                                size_t bytes) noexcept {
    D* d = Dev(device);
    constexpr const char* slot = SlotName(dir, true);
    return Guarded(d->host(), d->plugin_name(), slot, [&]() -> PX_Status* {
      // Only zero-byte copies are done here: any other failure, null
      // pointers included, is the device's to report, so that it can also
      // become the stream's sticky error.
      if (bytes == 0) return nullptr;
      S& s = *HandleCast<S>(stream);
      if constexpr (dir == Dir::kH2D) {
        return d->MemcpyH2DAsync(s, dst, src, bytes);
      } else if constexpr (dir == Dir::kD2H) {
        return d->MemcpyD2HAsync(s, dst, src, bytes);
      } else {
        return d->MemcpyD2DAsync(s, dst, src, bytes);
      }
    });
  }

  // -- streams and events ---------------------------------------------------

  static PX_Status* StreamCreate(PX_Device* device, PX_Stream** out_stream) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_create", [&]() -> PX_Status* {
      if (out_stream == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "stream_create: out_stream is null");
      }
      std::unique_ptr<S> stream;
      if constexpr (HasStreamCreate<D>::value) {
        PX_SDK_RETURN_IF_ERROR(d->StreamCreate(&stream));
      } else {
        stream = std::make_unique<S>();
      }
      if (stream == nullptr) return d->Error(PX_CODE_INTERNAL, "StreamCreate returned no stream");
      *out_stream = ToHandle<PX_Stream>(stream.release());
      return nullptr;
    });
  }

  static void StreamDestroy(PX_Device* device, PX_Stream* stream) noexcept {
    if (stream == nullptr) return;
    D* d = Dev(device);
    GuardedVoid(d->host(), d->plugin_name(), "stream_destroy", [&] { delete HandleCast<S>(stream); });
  }

  static PX_Status* StreamSynchronize(PX_Device* device, PX_Stream* stream) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_synchronize",
                   [&] { return d->StreamSynchronize(*HandleCast<S>(stream)); });
  }

  static PX_Status* StreamGetStatus(PX_Device* device, PX_Stream* stream) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_get_status",
                   [&] { return d->StreamGetStatus(*HandleCast<S>(stream)); });
  }

  static PX_Status* StreamAddCallback(PX_Device* device, PX_Stream* stream, PX_HostCallbackFn fn,
                                      void* arg) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_add_callback", [&]() -> PX_Status* {
      if (fn == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "stream_add_callback: the callback is null");
      }
      return d->StreamAddCallback(*HandleCast<S>(stream), fn, arg);
    });
  }

  // Stream capture (ABI 0.5): the device class has StreamCaptureBegin(S&),
  // StreamCaptureEnd(S&, PX_Graph**), GraphLaunch(S&, PX_Graph*) and
  // GraphDestroy(PX_Graph*).
  static PX_Status* StreamCaptureBegin(PX_Device* device, PX_Stream* stream) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_capture_begin",
                   [&] { return d->StreamCaptureBegin(*HandleCast<S>(stream)); });
  }

  static PX_Status* StreamCaptureEnd(PX_Device* device, PX_Stream* stream,
                                     PX_Graph** out_graph) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_capture_end", [&]() -> PX_Status* {
      if (out_graph == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "stream_capture_end: out_graph is null");
      }
      *out_graph = nullptr;
      return d->StreamCaptureEnd(*HandleCast<S>(stream), out_graph);
    });
  }

  static PX_Status* GraphLaunch(PX_Device* device, PX_Stream* stream, PX_Graph* graph) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "graph_launch", [&]() -> PX_Status* {
      if (graph == nullptr) return d->Error(PX_CODE_INVALID_ARGUMENT, "graph_launch: the graph is null");
      return d->GraphLaunch(*HandleCast<S>(stream), graph);
    });
  }

  static void GraphDestroy(PX_Device* device, PX_Graph* graph) noexcept {
    if (graph == nullptr) return;
    D* d = Dev(device);
    GuardedVoid(d->host(), d->plugin_name(), "graph_destroy", [&] { d->GraphDestroy(graph); });
  }

  // Stream interop (ABI 0.8): StreamNativeHandle(S&, uint64_t*) and
  // NativeStreamWait(uint64_t, S&).
  static PX_Status* StreamNativeHandle(PX_Device* device, PX_Stream* stream,
                                       uint64_t* out_handle) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_native_handle", [&]() -> PX_Status* {
      if (out_handle == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "stream_native_handle: out_handle is null");
      }
      *out_handle = 0;
      return d->StreamNativeHandle(*HandleCast<S>(stream), out_handle);
    });
  }

  static PX_Status* NativeStreamWait(PX_Device* device, uint64_t native,
                                     PX_Stream* stream) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "native_stream_wait", [&] {
      return d->NativeStreamWait(native, *HandleCast<S>(stream));
    });
  }

  static PX_Status* EventCreate(PX_Device* device, PX_Event** out_event) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "event_create", [&]() -> PX_Status* {
      if (out_event == nullptr) {
        return d->Error(PX_CODE_INVALID_ARGUMENT, "event_create: out_event is null");
      }
      std::unique_ptr<E> event;
      if constexpr (HasEventCreate<D>::value) {
        PX_SDK_RETURN_IF_ERROR(d->EventCreate(&event));
      } else {
        event = std::make_unique<E>();
      }
      if (event == nullptr) return d->Error(PX_CODE_INTERNAL, "EventCreate returned no event");
      *out_event = ToHandle<PX_Event>(event.release());
      return nullptr;
    });
  }

  static void EventDestroy(PX_Device* device, PX_Event* event) noexcept {
    if (event == nullptr) return;
    D* d = Dev(device);
    GuardedVoid(d->host(), d->plugin_name(), "event_destroy", [&] { delete HandleCast<E>(event); });
  }

  static PX_Status* EventRecord(PX_Device* device, PX_Stream* stream, PX_Event* event) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "event_record",
                   [&] { return d->EventRecord(*HandleCast<S>(stream), *HandleCast<E>(event)); });
  }

  static PX_Status* EventSynchronize(PX_Device* device, PX_Event* event) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "event_synchronize",
                   [&] { return d->EventSynchronize(*HandleCast<E>(event)); });
  }

  static PX_Status* StreamWaitEvent(PX_Device* device, PX_Stream* stream, PX_Event* event) noexcept {
    D* d = Dev(device);
    return Guarded(d->host(), d->plugin_name(), "stream_wait_event", [&] {
      return d->StreamWaitEvent(*HandleCast<S>(stream), *HandleCast<E>(event));
    });
  }

  // -- the table --------------------------------------------------------------

  static void Fill(const PluginContext& context, P* plugin, PX_PluginTable* t) {
    std::memset(t, 0, sizeof(*t));
    t->struct_size = sizeof(*t);
    t->abi_minor = context.abi_minor;
    t->plugin_name = context.info.name;
    t->plugin_version = context.info.version;
    t->platform_name = context.info.platform;
    t->device_type = context.info.device_type;
    t->dlpack_device_type = context.info.dlpack_device_type;
    t->plugin_state = plugin;
    t->plugin_shutdown = &Shutdown;
    t->register_kernels = &RegisterKernels;
    t->device_count = &DeviceCount;
    t->device_get_info = &DeviceGetInfo;
    t->device_open = &DeviceOpen;
    t->device_close = &DeviceClose;
    t->allocate = &Allocate;
    t->deallocate = &Deallocate;
    if constexpr (HasHostAllocate<D>::value) {
      t->host_allocate = &HostAllocate;
      t->host_deallocate = &HostDeallocate;
    }
    if constexpr (HasMemoryStats<D>::value) t->memory_stats = &MemoryStats;
    t->memcpy_h2d = &Memcpy<Dir::kH2D>;
    t->memcpy_d2h = &Memcpy<Dir::kD2H>;
    t->memcpy_d2d = &Memcpy<Dir::kD2D>;
    t->stream_create = &StreamCreate;
    t->stream_destroy = &StreamDestroy;
    t->stream_synchronize = &StreamSynchronize;
    t->stream_get_status = &StreamGetStatus;
    if constexpr (HasMemcpyH2DAsync<D>::value) t->memcpy_h2d_async = &MemcpyAsync<Dir::kH2D>;
    if constexpr (HasMemcpyD2HAsync<D>::value) t->memcpy_d2h_async = &MemcpyAsync<Dir::kD2H>;
    if constexpr (HasMemcpyD2DAsync<D>::value) t->memcpy_d2d_async = &MemcpyAsync<Dir::kD2D>;
    t->event_create = &EventCreate;
    t->event_destroy = &EventDestroy;
    t->event_record = &EventRecord;
    t->event_synchronize = &EventSynchronize;
    t->stream_wait_event = &StreamWaitEvent;
    if constexpr (HasStreamAddCallback<D>::value) t->stream_add_callback = &StreamAddCallback;
    if constexpr (HasStreamCapture<D>::value) {
      if (context.abi_minor >= 5) {
        t->stream_capture_begin = &StreamCaptureBegin;
        t->stream_capture_end = &StreamCaptureEnd;
        t->graph_launch = &GraphLaunch;
        t->graph_destroy = &GraphDestroy;
      }
    }
    // Collectives (ABI 0.7): the plugin class's Collectives(), a static
    // table (PX_CollectivesExt) whose functions take no plugin object.
    if constexpr (HasCollectives<P>::value) {
      if (context.abi_minor >= 7) t->collectives = plugin->Collectives();
    }
    static_assert(HasStreamNativeHandle<D>::value == HasNativeStreamWait<D>::value,
                  "a device class has both StreamNativeHandle and NativeStreamWait, or neither");
    if constexpr (HasStreamNativeHandle<D>::value) {
      if (context.abi_minor >= 8) {
        t->stream_native_handle = &StreamNativeHandle;
        t->native_stream_wait = &NativeStreamWait;
      }
    }
  }
};

inline void Probe(const PluginInfo& info, PX_PluginProbeInfo* out_info) noexcept {
  if (out_info == nullptr) return;
  PX_PluginProbeInfo probe;
  std::memset(&probe, 0, sizeof(probe));
  probe.struct_size = sizeof(probe);
  probe.plugin_name = info.name;
  probe.abi_major = PX_ABI_VERSION_MAJOR;
  probe.abi_min_minor = info.abi_min_minor;
  probe.abi_max_minor = info.abi_max_minor;
  probe.score = info.score;
  FillSized(out_info, probe);
}

template <typename P>
PX_Status* Initialize(const PluginInfo& info, const PX_HostInitArgs* args,
                      PX_PluginTable* out_table) noexcept {
  // Without usable services no refusal can be made: return NULL with the
  // table untouched, and the host refuses the plugin for its missing slots.
  if (args == nullptr || out_table == nullptr || !PX_STRUCT_HAS(args, PX_HostInitArgs, services) ||
      args->services == nullptr ||
      !PX_STRUCT_HAS(args->services, PX_HostServices, status_create) ||
      args->services->status_create == nullptr) {
    return nullptr;
  }
  const PX_HostServices* host = args->services;
  // Every service of ABI 0.1 is used by the SDK (kernel_node_name is the last).
  if (!PX_STRUCT_HAS(host, PX_HostServices, kernel_node_name)) {
    return px_sdk_error(host, PX_CODE_FAILED_PRECONDITION,
                        "the %s plugin needs PX_HostServices up to kernel_node_name (%zu bytes); "
                        "the host passed %zu",
                        info.name,
                        offsetof(PX_HostServices, kernel_node_name) +
                            sizeof(host->kernel_node_name),
                        host->struct_size);
  }
  if (out_table->struct_size < sizeof(out_table->struct_size)) {
    return px_sdk_error(host, PX_CODE_FAILED_PRECONDITION,
                        "the host's plugin table is %zu bytes, too small for anything",
                        out_table->struct_size);
  }
  PluginContext context;
  context.host = host;
  context.info = info;
  PX_SDK_RETURN_IF_ERROR(
      px_sdk_negotiate(args, info.abi_min_minor, info.abi_max_minor, &context.abi_minor));
  if (PX_STRUCT_HAS(args, PX_HostInitArgs, synchronous_debug)) {
    context.synchronous_debug = args->synchronous_debug != 0;
  }
  P* plugin = nullptr;
  PX_Status* status = Guarded(host, info.name, "PX_PluginInitialize", [&]() -> PX_Status* {
    if (PX_STRUCT_HAS(args, PX_HostInitArgs, plugin_path) && args->plugin_path != nullptr) {
      context.plugin_path = args->plugin_path;
    }
    plugin = new P(context);
    return nullptr;
  });
  if (status != nullptr) return status;
  PX_PluginTable table;
  Table<P>::Fill(context, plugin, &table);
  FillSized(out_table, table);
  // A newer host has a larger table: say which slots this plugin knows.
  if (out_table->struct_size > sizeof(PX_PluginTable)) out_table->struct_size = sizeof(PX_PluginTable);
  return nullptr;
}

}  // namespace internal
}  // namespace plexus::sdk

// Defines the plugin's two exported entry points for plugin class
// `PluginClass` and the sdk::PluginInfo `info` (an expression; its strings
// must be static). Use once, at namespace scope, in one source file.
#define PX_SDK_DEFINE_PLUGIN(PluginClass, info)                                               \
  extern "C" PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* out_info) {             \
    ::plexus::sdk::internal::Probe((info), out_info);                                         \
  }                                                                                           \
  extern "C" PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(const PX_HostInitArgs* args,     \
                                                             PX_PluginTable* out_table) {     \
    return ::plexus::sdk::internal::Initialize<PluginClass>((info), args, out_table);         \
  }

#endif  // PLEXUS_SDK_PLUGIN_H_
