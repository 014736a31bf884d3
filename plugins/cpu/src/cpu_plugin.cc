// The CPU device plugin's two exported symbols: the probe and the
// initializer, which fills the plugin table from cpu_device.cc,
// cpu_stream.cc and the kernel families under kernels/.
#include "cpu_plugin.h"

#include <cstring>
#include <new>

#include "cpu_device.h"
#include "cpu_stream.h"
#include "kernels/register_kernels.h"
#include "threading.h"
#include "plexus/sdk/plugin_sdk.h"

namespace plexus::cpu {
namespace {

constexpr char kPluginName[] = "cpu";

PX_Status* RegisterKernels(void* plugin, PX_KernelRegistrar* registrar) {
  // Every family is written with the SDK's C++ kernel helpers.
  sdk::RegistrationInfo* info = &static_cast<PluginState*>(plugin)->info;
  const FamilyFn families[] = {
      RegisterBasicFamily,     RegisterElementwiseFamily, RegisterActivationFamily,
      RegisterReductionFamily, RegisterLinalgFamily,      RegisterNnFamily,
      RegisterArrayFamily,     RegisterAudioFamily,       RegisterFusedFamily,
      RegisterActivationGradFamily, RegisterConvGradFamily, RegisterNnGradFamily,
      RegisterOptimizerFamily, RegisterArrayGradFamily, RegisterSelectionFamily,
      RegisterSegmentFamily,   RegisterTensorScatterFamily, RegisterScanFamily,
      RegisterMatrixBandFamily,
      RegisterImageFamily,     RegisterImageBoxFamily,  RegisterNn3dFamily,
      RegisterImageTransformFamily, RegisterImageColorFamily, RegisterDepthSpaceFamily,
      RegisterLrnFamily,
      RegisterBitwiseFamily,   RegisterMatrixDiagFamily, RegisterMatrixSolveFamily,
      RegisterNn3dGradFamily,
  };
  for (FamilyFn family : families) {
    if (PX_Status* s = family(info, registrar)) return s;
  }
  return nullptr;
}

void Shutdown(void* plugin) { delete static_cast<PluginState*>(plugin); }

void FillTable(uint32_t abi_minor, PluginState* state, PX_PluginTable* t) {
  std::memset(t, 0, sizeof(*t));
  t->struct_size = sizeof(*t);
  t->abi_minor = abi_minor;
  t->plugin_name = kPluginName;
  t->plugin_version = "0.1.0";
  t->platform_name = "Host";
  t->device_type = "CPU";
  t->dlpack_device_type = kDLCPU;
  t->plugin_state = state;
  t->plugin_shutdown = Shutdown;
  t->register_kernels = RegisterKernels;
  t->device_count = DeviceCount;
  t->device_get_info = DeviceGetInfo;
  t->device_open = DeviceOpen;
  t->device_close = DeviceClose;
  t->allocate = Allocate;
  t->deallocate = Deallocate;
  t->host_allocate = HostAllocate;
  t->host_deallocate = HostDeallocate;
  t->memory_stats = MemoryStats;
  t->memcpy_h2d = Memcpy;
  t->memcpy_d2h = Memcpy;
  t->memcpy_d2d = Memcpy;
  t->stream_create = StreamCreate;
  t->stream_destroy = StreamDestroy;
  t->stream_synchronize = StreamSynchronize;
  t->stream_get_status = StreamGetStatus;
  t->memcpy_h2d_async = MemcpyAsync;
  t->memcpy_d2h_async = MemcpyAsync;
  t->memcpy_d2d_async = MemcpyAsync;
  t->event_create = EventCreate;
  t->event_destroy = EventDestroy;
  t->event_record = EventRecord;
  t->event_synchronize = EventSynchronize;
  t->stream_wait_event = StreamWaitEvent;
  t->stream_add_callback = StreamAddCallback;
}

PX_Status* Initialize(const PX_HostInitArgs* args, PX_PluginTable* out_table) {
  // Without services there is no way to create a refusal; leaving the table
  // unfilled makes the host refuse the plugin for its missing required slots.
  if (args == nullptr || out_table == nullptr ||
      !PX_STRUCT_HAS(args, PX_HostInitArgs, services) ||
      args->services == nullptr ||
      !PX_STRUCT_HAS(args->services, PX_HostServices, status_create) ||
      args->services->status_create == nullptr) {
    return nullptr;
  }
  const PX_HostServices* host = args->services;
  // output_allocate is the last service the plugin calls.
  if (!PX_STRUCT_HAS(host, PX_HostServices, output_allocate)) {
    return px_sdk_error(host, PX_CODE_FAILED_PRECONDITION,
                        "the cpu plugin needs PX_HostServices up to "
                        "output_allocate (%zu bytes); the host passed %zu",
                        offsetof(PX_HostServices, output_allocate) +
                            sizeof(host->output_allocate),
                        host->struct_size);
  }
  uint32_t abi_minor = 0;
  if (PX_Status* s =
          px_sdk_negotiate(args, 0, PX_ABI_VERSION_MINOR, &abi_minor)) {
    return s;
  }
  auto* state = new (std::nothrow) PluginState{host, {host, kPluginName}};
  if (state == nullptr) {
    return px_sdk_error(host, PX_CODE_RESOURCE_EXHAUSTED,
                        "out of host memory initializing the cpu plugin");
  }
  // Kernels size their OpenMP teams to the host's thread budget (ABI 0.6)
  // when it offers one; otherwise they keep OpenMP's default.
  if (CanFollowThreadBudget(host)) state->info.before_compute = &ApplyThreadBudget;
  PinOpenMpRuntime();
  PX_PluginTable table;
  FillTable(abi_minor, state, &table);
  FillSized(out_table, table);
  // A newer host's table is longer than ours: say how much of it we filled.
  if (out_table->struct_size > sizeof(PX_PluginTable)) out_table->struct_size = sizeof(PX_PluginTable);
  return nullptr;
}

}  // namespace
}  // namespace plexus::cpu

extern "C" PX_PLUGIN_EXPORT void PX_PluginProbe(PX_PluginProbeInfo* out_info) {
  if (out_info == nullptr) return;
  PX_PluginProbeInfo info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.plugin_name = plexus::cpu::kPluginName;
  info.abi_major = PX_ABI_VERSION_MAJOR;
  info.abi_min_minor = 0;
  info.abi_max_minor = PX_ABI_VERSION_MINOR;
  info.score = 0;
  plexus::cpu::FillSized(out_info, info);
}

extern "C" PX_PLUGIN_EXPORT PX_Status* PX_PluginInitialize(
    const PX_HostInitArgs* args, PX_PluginTable* out_table) {
  return plexus::cpu::Initialize(args, out_table);
}
