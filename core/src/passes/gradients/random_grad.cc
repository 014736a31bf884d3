// The random ops are not differentiable, as in TensorFlow (random_ops.py,
// stateless_random_ops.py): their inputs (shapes, seeds, keys, counters)
// get no gradient. StatelessRandomGammaV2/V3 do have a gradient in
// TensorFlow (through RandomGammaGrad, with respect to alpha), which Plexus
// does not have yet: they are left unregistered, so a gradient through
// alpha fails naming the op instead of silently being zero.
#include "plexus/gradients.h"

namespace plexus {
namespace {

PX_NO_GRADIENT("RandomUniform");
PX_NO_GRADIENT("RandomStandardNormal");
PX_NO_GRADIENT("TruncatedNormal");
PX_NO_GRADIENT("StatelessRandomUniform");
PX_NO_GRADIENT("StatelessRandomNormal");
PX_NO_GRADIENT("StatelessTruncatedNormal");
PX_NO_GRADIENT("StatelessRandomUniformInt");
PX_NO_GRADIENT("StatelessRandomUniformFullInt");
PX_NO_GRADIENT("StatelessRandomUniformV2");
PX_NO_GRADIENT("StatelessRandomNormalV2");
PX_NO_GRADIENT("StatelessTruncatedNormalV2");
PX_NO_GRADIENT("StatelessRandomUniformIntV2");
PX_NO_GRADIENT("StatelessRandomUniformFullIntV2");

}  // namespace
}  // namespace plexus
