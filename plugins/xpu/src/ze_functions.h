/* The Level Zero entry points the XPU plugin uses, as one X-macro list:
 * X(name) once per function. ze_loader.cc resolves each by name with dlsym
 * (the plugin never links the loader), and the test's fake loader
 * (tests/xpu/fake_ze_loader.c) defines each, so the two cannot drift apart.
 * Plain C: the fake loader includes it too. Every entry exists in the Level
 * Zero 1.0 API (loader 1.8 and later export them all). */
#ifndef PLEXUS_PLUGINS_XPU_ZE_FUNCTIONS_H_
#define PLEXUS_PLUGINS_XPU_ZE_FUNCTIONS_H_

/* Every entry point: zeInit, the only one called before zeInit has
 * succeeded, and the others. */
#define PX_ZE_FUNCTIONS(X) X(zeInit) PX_ZE_FUNCTIONS_AFTER_INIT(X)

/* The entry points that may only be called once zeInit has succeeded. */
#define PX_ZE_FUNCTIONS_AFTER_INIT(X)          \
  X(zeDriverGet)                               \
  X(zeDeviceGet)                               \
  X(zeDeviceGetProperties)                     \
  X(zeDeviceGetMemoryProperties)               \
  X(zeDeviceGetCommandQueueGroupProperties)    \
  X(zeContextCreate)                           \
  X(zeContextDestroy)                          \
  X(zeMemAllocDevice)                          \
  X(zeMemAllocHost)                            \
  X(zeMemFree)                                 \
  X(zeCommandListCreateImmediate)              \
  X(zeCommandListDestroy)                      \
  X(zeCommandListAppendMemoryCopy)             \
  X(zeCommandListAppendMemoryFill)             \
  X(zeCommandListAppendBarrier)                \
  X(zeCommandListAppendSignalEvent)            \
  X(zeCommandListAppendWaitOnEvents)           \
  X(zeCommandListAppendLaunchKernel)           \
  X(zeEventPoolCreate)                         \
  X(zeEventPoolDestroy)                        \
  X(zeEventCreate)                             \
  X(zeEventDestroy)                            \
  X(zeEventHostSynchronize)                    \
  X(zeEventQueryStatus)                        \
  X(zeEventHostReset)                          \
  X(zeModuleCreate)                            \
  X(zeModuleDestroy)                           \
  X(zeModuleBuildLogGetString)                 \
  X(zeModuleBuildLogDestroy)                   \
  X(zeKernelCreate)                            \
  X(zeKernelDestroy)                           \
  X(zeKernelSetArgumentValue)                  \
  X(zeKernelSetGroupSize)                      \
  X(zeKernelSuggestGroupSize)

#endif /* PLEXUS_PLUGINS_XPU_ZE_FUNCTIONS_H_ */
