// How the cpu plugin's kernels size their thread teams. The GEMM and
// convolution libraries (oneDNN, Eigen with OpenMP) and the plugin's own
// parallel loops run OpenMP teams of omp_get_max_threads() threads, a
// setting each calling thread has for itself. Before each compute the SDK's
// kernel adapter calls ApplyThreadBudget (installed in cpu_plugin.cc when
// the host offers PX_HostServices.intra_op_threads, ABI 0.6), which sets the
// calling thread's team size to the host's budget when it changed.
// README.md beside this folder, "Threading".
#ifndef PLEXUS_PLUGINS_CPU_THREADING_H_
#define PLEXUS_PLUGINS_CPU_THREADING_H_

#include "plexus/plugin_api.h"

namespace plexus::cpu {

// True when the plugin can follow a thread budget (built with OpenMP) and
// `host` offers one.
bool CanFollowThreadBudget(const PX_HostServices* host);

// Sets this thread's OpenMP team size to the host's budget, capped by
// OMP_NUM_THREADS when the environment sets it; does nothing when the
// budget is what this thread last set.
void ApplyThreadBudget(const PX_HostServices* host);

// Keeps the OpenMP runtime (libgomp) loaded for the rest of the process,
// even when the host unloads this plugin. Its worker threads outlive every
// parallel region and spin or sleep inside the library; unloading it under
// them (a runtime destroyed at exit while a worker is still spinning, which
// a busy machine makes likely) crashes the process. Called once, when the
// plugin is initialized; nothing without OpenMP.
void PinOpenMpRuntime();

// The team size a parallel region started on this thread gets
// (omp_get_max_threads), 1 without OpenMP. Primitives that fix their
// team when created (oneDNN's) are cached per this value.
int TeamSize();

// This thread's index in the innermost OpenMP team it runs in (0 outside a
// parallel region, and without OpenMP).
int ThreadIndex();

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_THREADING_H_
