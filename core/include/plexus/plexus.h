// Umbrella header of the Plexus core's C++ interface.
#ifndef PLEXUS_PLEXUS_H_
#define PLEXUS_PLEXUS_H_

#include "plexus/device.h"
#include "plexus/dtype.h"
#include "plexus/graph.h"
#include "plexus/graph_import.h"
#include "plexus/npy.h"
#include "plexus/placement.h"
#include "plexus/runtime.h"
#include "plexus/session.h"
#include "plexus/status.h"
#include "plexus/tensor.h"
#include "plexus/threads.h"

#endif  // PLEXUS_PLEXUS_H_
