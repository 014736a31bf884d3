// The cuda plugin's collectives (ABI 0.7, PX_CollectivesExt of
// plexus/plugin_api.h) on NCCL, which is opened at run time
// (nccl_loader.h): communicators (nccl_comm.h) and the collectives queued on
// the plugin's CUDA streams. Offered even where NCCL is missing: comm_create
// then returns UNAVAILABLE saying how to install it.
#ifndef PLEXUS_PLUGINS_CUDA_COLLECTIVES_H_
#define PLEXUS_PLUGINS_CUDA_COLLECTIVES_H_

#include "plexus/plugin_api.h"

namespace plexus::cuda {

// The extension's static table. `host` (the plugin's services, valid until
// unload) makes the statuses of calls that have no communicator to take
// them from (a null PX_Comm*).
const PX_CollectivesExt* NcclCollectives(const PX_HostServices* host);

}  // namespace plexus::cuda

#endif  // PLEXUS_PLUGINS_CUDA_COLLECTIVES_H_
