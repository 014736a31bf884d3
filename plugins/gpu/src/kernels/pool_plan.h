// The plan of a 2-D pooling (pool::PoolPlan, pool_launch.h) from the SDK's
// Window and the input's shape, for the host side of MaxPool / AvgPool
// (pool.cc) and of their gradients (nn_grad.cc).
#ifndef PLEXUS_PLUGINS_GPU_KERNELS_POOL_PLAN_H_
#define PLEXUS_PLUGINS_GPU_KERNELS_POOL_PLAN_H_

#include "kernels/pool_launch.h"
#include "plexus/sdk/kernel.h"
#include "plexus/sdk/window.h"

namespace plexus::cuda::pool {

// The pooling of a 4-D input `in` (in the window's layout).
inline PoolPlan PlanFor(const sdk::Window& w, const sdk::Shape& in) {
  PoolPlan plan;
  plan.nchw = w.nchw;
  plan.n = in[0];
  plan.c = in[w.nchw ? 1 : 3];
  plan.h = in[w.nchw ? 2 : 1];
  plan.w = in[w.nchw ? 3 : 2];
  plan.kh = w.kh;
  plan.kw = w.kw;
  plan.sh = w.sh;
  plan.sw = w.sw;
  w.Output(plan.h, w.kh, w.sh, 1, w.pad_top, w.pad_bottom, &plan.oh, &plan.top);
  w.Output(plan.w, w.kw, w.sw, 1, w.pad_left, w.pad_right, &plan.ow, &plan.left);
  return plan;
}

// The pooled output's shape.
inline sdk::Shape PooledShape(const PoolPlan& p) {
  return p.nchw ? sdk::Shape{p.n, p.c, p.oh, p.ow} : sdk::Shape{p.n, p.oh, p.ow, p.c};
}

}  // namespace plexus::cuda::pool

#endif  // PLEXUS_PLUGINS_GPU_KERNELS_POOL_PLAN_H_
