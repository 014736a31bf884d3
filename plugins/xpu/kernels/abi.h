/* What the XPU plugin's kernels and their host code share: operation codes
 * and the plan structures passed to kernels by value. Every structure a
 * kernel takes by value is defined here and only here. Included both by the
 * OpenCL C sources (directly or through common.h) and by C++ (the kernel
 * classes and the PoCL tests), so it is plain C with fixed-size fields only:
 * every field is a px_i64 (or an array of them), so the OpenCL C and C++
 * layouts agree without padding. The kernel classes check the sizes with
 * static_assert. */
#ifndef PX_XPU_KERNELS_ABI_H_
#define PX_XPU_KERNELS_ABI_H_

#ifdef __OPENCL_C_VERSION__
typedef long px_i64;
#else
#include <stdint.h>
typedef int64_t px_i64;
#endif

/* Work-group size of the kernels that reduce in local memory: they are
 * launched with exactly this many work-items per group. */
#define PX_XPU_REDUCE_WG 256

/* Most dimensions of a plan: a collapsed broadcast or reduction, a strided
 * copy, a gather_nd index depth, a mirror pad or a space/batch move. */
#define PX_XPU_MAX_DIMS 8

/* Elementwise broadcast of up to three inputs into one output: the output's
 * collapsed dims (row-major) and each input's element stride per dim (0
 * where the input repeats). rank 0: a single element. */
typedef struct {
  px_i64 rank;
  px_i64 num_elements;
  px_i64 dims[PX_XPU_MAX_DIMS];
  px_i64 strides[3][PX_XPU_MAX_DIMS];
} px_xpu_broadcast_plan;

/* A reduction: `outputs` output elements (the kept dims, row-major), each
 * folding `count` input elements (the reduced dims, row-major). Input offset
 * = sum over kept dims of index * kept_strides + sum over reduced dims of
 * index * red_strides. */
typedef struct {
  px_i64 outputs;
  px_i64 count;
  px_i64 kept_rank;
  px_i64 red_rank;
  px_i64 kept_dims[PX_XPU_MAX_DIMS];
  px_i64 kept_strides[PX_XPU_MAX_DIMS];
  px_i64 red_dims[PX_XPU_MAX_DIMS];
  px_i64 red_strides[PX_XPU_MAX_DIMS];
} px_xpu_reduce_plan;

/* A strided copy (px_strided_copy_*): output element k, at coordinate c of
 * dims (row-major), moves from src_base + sum c[d] * src[d] to dst_base +
 * sum c[d] * dst[d]. Strides in elements, any sign; 0 repeats. */
typedef struct {
  px_i64 dims[PX_XPU_MAX_DIMS];
  px_i64 src[PX_XPU_MAX_DIMS]; /* source strides (elements) */
  px_i64 dst[PX_XPU_MAX_DIMS]; /* destination strides (elements) */
} px_xpu_copy_plan;

/* GatherNd (px_gather_nd_*): params' leading dimensions (as many as the
 * index depth) and their strides in params (words). */
typedef struct {
  px_i64 dims[PX_XPU_MAX_DIMS];
  px_i64 strides[PX_XPU_MAX_DIMS];
} px_xpu_gather_nd_plan;

/* MirrorPad (px_mirror_pad_*): the input's and output's dims, the padding
 * before each dim, and the input's strides (elements). */
typedef struct {
  px_i64 in_dims[PX_XPU_MAX_DIMS];
  px_i64 out_dims[PX_XPU_MAX_DIMS];
  px_i64 before[PX_XPU_MAX_DIMS];
  px_i64 in_strides[PX_XPU_MAX_DIMS];
} px_xpu_mirror_plan;

/* SpaceToBatchND / BatchToSpaceND (px_space_batch_*), per spatial dim: the
 * block size, the space side's and the batch side's (grid) sizes, and the
 * padding (to batch) or crop (to space) before. */
typedef struct {
  px_i64 block[PX_XPU_MAX_DIMS];
  px_i64 space[PX_XPU_MAX_DIMS]; /* the space side's spatial dimensions */
  px_i64 grid[PX_XPU_MAX_DIMS];  /* the batch side's spatial dimensions */
  px_i64 pad[PX_XPU_MAX_DIMS];   /* padding (to batch) or crop (to space) before */
} px_xpu_space_batch_plan;

/* The geometry of one 2-D convolution (px_conv2d_*), all in elements. */
typedef struct {
  px_i64 n, c, h, w;     /* input: batch, depth, height, width */
  px_i64 oc, oh, ow;     /* output depth, height, width */
  px_i64 kh, kw;         /* filter window */
  px_i64 sh, sw, dh, dw; /* strides, dilations */
  px_i64 top, left;      /* padding before (rows, columns) */
  px_i64 cpg;            /* input channels per group (the filter's depth) */
  px_i64 ocpg;           /* output channels per group */
  px_i64 nchw;           /* 1: NCHW tensors, 0: NHWC */
} px_xpu_conv_geom;

/* The geometry of one 2-D max or average pooling (px_pool_*), in elements. */
typedef struct {
  px_i64 n, c, h, w;     /* input: batch, depth, height, width */
  px_i64 oh, ow;         /* output height, width */
  px_i64 kh, kw, sh, sw; /* window, strides */
  px_i64 top, left;      /* padding before (rows, columns) */
  px_i64 nchw;           /* 1: NCHW tensors, 0: NHWC */
} px_xpu_pool_geom;

/* Unary ops (ew_unary_<t>; the integer kernels take NEG ABS SIGN SQUARE
 * ROUND RELU RELU6). */
enum {
  PX_UN_NEG = 0,
  PX_UN_ABS = 1,
  PX_UN_SIGN = 2,
  PX_UN_EXP = 3,
  PX_UN_LOG = 4,
  PX_UN_LOG1P = 5,
  PX_UN_SQRT = 6,
  PX_UN_RSQRT = 7,
  PX_UN_SQUARE = 8,
  PX_UN_RECIPROCAL = 9,
  PX_UN_TANH = 10,
  PX_UN_SIGMOID = 11,
  PX_UN_ERF = 12,
  PX_UN_FLOOR = 13,
  PX_UN_CEIL = 14,
  PX_UN_ROUND = 15,
  PX_UN_RELU = 16,
  PX_UN_RELU6 = 17,
  PX_UN_ELU = 18,
  PX_UN_SELU = 19,
  PX_UN_LEAKY_RELU = 20,
  PX_UN_SOFTPLUS = 21,
  PX_UN_GELU_TANH = 22,
  PX_UN_GELU_ERF = 23
};

/* Binary arithmetic (ew_binary_<t>). */
enum {
  PX_BIN_ADD = 0,
  PX_BIN_SUB = 1,
  PX_BIN_MUL = 2,
  PX_BIN_DIV = 3,
  PX_BIN_MAX = 4,
  PX_BIN_MIN = 5,
  PX_BIN_POW = 6,
  PX_BIN_SQUARED_DIFFERENCE = 7,
  PX_BIN_FLOOR_DIV = 8,
  PX_BIN_FLOOR_MOD = 9
};

/* Comparisons (ew_compare_<t>, bool output) and logical ops (ew_logical). */
enum {
  PX_CMP_LESS = 0,
  PX_CMP_LESS_EQUAL = 1,
  PX_CMP_GREATER = 2,
  PX_CMP_GREATER_EQUAL = 3,
  PX_CMP_EQUAL = 4,
  PX_CMP_NOT_EQUAL = 5,
  PX_LOGICAL_AND = 6,
  PX_LOGICAL_OR = 7
};

/* Reductions (reduce_<t>_group / reduce_<t>_serial; ALL and ANY only for b8). */
enum {
  PX_RED_SUM = 0,
  PX_RED_MEAN = 1,
  PX_RED_MAX = 2,
  PX_RED_MIN = 3,
  PX_RED_PROD = 4,
  PX_RED_ALL = 5,
  PX_RED_ANY = 6,
  PX_RED_ARGMAX = 7,
  PX_RED_ARGMIN = 8
};

#endif /* PX_XPU_KERNELS_ABI_H_ */
