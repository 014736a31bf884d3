// The run-time choice of instruction set for the cpu plugin's loops that
// are compiled several times with target attributes (the direct
// convolutions through vector16.h, the pooling loops in nn.cc): AVX-512,
// AVX2 + FMA, or the build's baseline. x86-64 only, like those loops.
#ifndef PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_ISA_H_
#define PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_ISA_H_

namespace plexus::cpu {

// The instruction sets those loops are built for, and the widest this CPU
// runs (AVX-512 needs AVX512F and AVX512VL, AVX2 needs FMA too), checked
// once.
enum class VectorIsa { kBaseline, kAvx2, kAvx512 };
inline VectorIsa WidestVectorIsa() {
  static const VectorIsa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) return VectorIsa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
    return VectorIsa::kBaseline;
  }();
  return isa;
}

}  // namespace plexus::cpu

#endif  // PLEXUS_PLUGINS_CPU_KERNELS_VECTOR_ISA_H_
