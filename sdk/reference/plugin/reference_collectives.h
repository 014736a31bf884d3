// The reference plugin's collectives extension (ABI 0.7), through the
// host's key-value store (reference_collectives.cc).
#ifndef PLEXUS_SDK_REFERENCE_PLUGIN_REFERENCE_COLLECTIVES_H_
#define PLEXUS_SDK_REFERENCE_PLUGIN_REFERENCE_COLLECTIVES_H_

#include "plexus/plugin_api.h"

namespace plexus::reference {

const PX_CollectivesExt* Collectives(const PX_HostServices* host);

}  // namespace plexus::reference

#endif  // PLEXUS_SDK_REFERENCE_PLUGIN_REFERENCE_COLLECTIVES_H_
