// CPU kernel of _PlexusFusedElementwise (sdk/fused_elementwise.h): the tree
// of elementwise ops the optimizer fused runs over tiles of the output, one
// instruction at a time over the whole tile, so the intermediate values stay
// in cache and one launch replaces many.
//
// The program is parsed, checked and compiled once, when the kernel is
// created: each instruction becomes a step with an op code, its operands
// (an input, a register holding an earlier result, or an immediate constant)
// and the register it writes. Registers are reused once their value is dead,
// so a chain needs two whatever its length. A call allocates nothing on the
// heap: the registers live in thread-local scratch (one kernel instance may
// run on several threads at once, and a large output's tiles are split over
// the OpenMP team), one-element inputs and constants are read
// as repeated values, never expanded, and a small output is one tile.
//
// Results equal the separate kernels': the simple ops (arithmetic, Neg, Abs,
// Square, Relu, Relu6, Maximum, Minimum) are the same one-rounding
// expressions as ew::RunBinary / ew::RunActivation, and the transcendental
// ones call ew::RunUnary on tiles aligned like the separate kernels' buffers.
#include "plexus/sdk/fused_elementwise.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/fused_steps.h"
#include "kernels/fused_epilogue.h"
#include "plexus/sdk/op_signatures.h"

namespace plexus::cpu {
namespace {

// Elements per tile. A multiple of every vector width, so a tile's vector
// and scalar parts fall where the separate kernels' do.
constexpr int64_t kTile = 1024;
// Outputs from this many elements run their tiles on the thread team.
constexpr int64_t kParallelElements = int64_t{1} << 15;
// Registers start on 64-byte boundaries (16 floats, 8 doubles).
constexpr int64_t kAlignElements = 16;

enum class Code : uint8_t {
  kNeg, kAbs, kSquare, kRelu, kRelu6, kUnary,  // unary (kUnary: ew::RunUnary with `un`)
  kAdd, kSub, kMul, kDiv, kMax, kMin, kSqDiff,  // binary
};

struct Operand {
  enum Kind : uint8_t { kInput, kRegister, kConstant } kind = kInput;
  int index = 0;  // the input or the register
};

struct Step {
  Code code = Code::kNeg;
  fused_steps::Op wide = fused_steps::Op::kNeg;  // the float loop of a simple step (fused_steps.h)
  ew::Un un = ew::Un::kNeg;
  bool binary = false;
  Operand a, b;
  int out = -1;  // the register written; -1 for the last step, which writes the output
  // Immediate operands, in both float types (a, b).
  float constant_f[2] = {0, 0};
  double constant_d[2] = {0, 0};
};

Code CodeOf(const std::string& op, ew::Un* un) {
  static const std::pair<const char*, ew::Un> kUnary[] = {
      {"Exp", ew::Un::kExp},   {"Log", ew::Un::kLog},   {"Sqrt", ew::Un::kSqrt},
      {"Rsqrt", ew::Un::kRsqrt}, {"Reciprocal", ew::Un::kReciprocal}, {"Tanh", ew::Un::kTanh},
      {"Sigmoid", ew::Un::kSigmoid}};
  for (const auto& [name, u] : kUnary) {
    if (op == name) {
      *un = u;
      return Code::kUnary;
    }
  }
  static const std::pair<const char*, Code> kCodes[] = {
      {"Neg", Code::kNeg},     {"Abs", Code::kAbs},         {"Square", Code::kSquare},
      {"Relu", Code::kRelu},   {"Relu6", Code::kRelu6},     {"Add", Code::kAdd},
      {"AddV2", Code::kAdd},   {"Sub", Code::kSub},         {"Mul", Code::kMul},
      {"Div", Code::kDiv},     {"RealDiv", Code::kDiv},     {"Maximum", Code::kMax},
      {"Minimum", Code::kMin}, {"SquaredDifference", Code::kSqDiff}};
  for (const auto& [name, code] : kCodes) {
    if (op == name) return code;
  }
  throw sdk::Error(PX_CODE_UNIMPLEMENTED, "_PlexusFusedElementwise: op '" + op + "' cannot be fused");
}

// out[i] = f(a[i], b[i]) over one tile, where a repeated operand is one value.
template <typename T, typename F>
inline void Binary(const T* a, bool ra, const T* b, bool rb, T* out, int64_t len, F f) {
  if (!ra && !rb) {
    for (int64_t i = 0; i < len; ++i) out[i] = f(a[i], b[i]);
  } else if (!ra) {
    const T y = *b;
    for (int64_t i = 0; i < len; ++i) out[i] = f(a[i], y);
  } else if (!rb) {
    const T x = *a;
    for (int64_t i = 0; i < len; ++i) out[i] = f(x, b[i]);
  } else {
    const T v = f(*a, *b);
    for (int64_t i = 0; i < len; ++i) out[i] = v;
  }
}

// out[i] = f(a[i]) over one tile.
template <typename T, typename F>
inline void Unary(const T* a, bool ra, T* out, int64_t len, F f) {
  if (!ra) {
    for (int64_t i = 0; i < len; ++i) out[i] = f(a[i]);
  } else {
    const T v = f(*a);
    for (int64_t i = 0; i < len; ++i) out[i] = v;
  }
}

// The simple steps in fused_steps.h's order (every code but kUnary).
fused_steps::Op WideOp(Code c) {
  switch (c) {
    case Code::kNeg: return fused_steps::Op::kNeg;
    case Code::kAbs: return fused_steps::Op::kAbs;
    case Code::kSquare: return fused_steps::Op::kSquare;
    case Code::kRelu: return fused_steps::Op::kRelu;
    case Code::kRelu6: return fused_steps::Op::kRelu6;
    case Code::kAdd: return fused_steps::Op::kAdd;
    case Code::kSub: return fused_steps::Op::kSub;
    case Code::kMul: return fused_steps::Op::kMul;
    case Code::kDiv: return fused_steps::Op::kDiv;
    case Code::kMax: return fused_steps::Op::kMax;
    case Code::kMin: return fused_steps::Op::kMin;
    case Code::kSqDiff: return fused_steps::Op::kSqDiff;
    case Code::kUnary: break;
  }
  return fused_steps::Op::kNeg;  // not reached: kUnary never asks
}

// One step over a tile. Float's simple steps run in fused_steps.h's loops
// for the widest vectors the CPU has (`float_steps`); the rest here.
template <typename T>
void RunStep(const Step& s, fused_steps::StepFn float_steps, const T* a, bool ra, const T* b, bool rb, T* out,
             int64_t len) {
  if constexpr (std::is_same_v<T, float>) {
    if (s.code != Code::kUnary) return float_steps(s.wide, a, ra, b, rb, out, len);
  }
  switch (s.code) {
    // The same expressions as the separate kernels (elementwise_impl.h,
    // elementwise_eigen.h): NaN passes through Relu, Relu6, Maximum, Minimum.
    case Code::kNeg: return Unary(a, ra, out, len, [](T x) { return -x; });
    case Code::kAbs: return Unary(a, ra, out, len, [](T x) { return std::abs(x); });
    case Code::kSquare: return Unary(a, ra, out, len, [](T x) { return x * x; });
    case Code::kRelu: return Unary(a, ra, out, len, [](T x) { return x < T(0) ? T(0) : x; });
    case Code::kRelu6:
      return Unary(a, ra, out, len, [](T x) { return x < T(0) ? T(0) : (x > T(6) ? T(6) : x); });
    case Code::kUnary:
      if (ra) {  // one value, repeated
        ew::RunUnary(s.un, a, out, 1);
        std::fill(out + 1, out + len, out[0]);
      } else {
        ew::RunUnary(s.un, a, out, len);
      }
      return;
    case Code::kAdd: return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x + y; });
    case Code::kSub: return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x - y; });
    case Code::kMul: return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x * y; });
    case Code::kDiv: return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x / y; });
    case Code::kMax:
      return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x > y || std::isnan(x) ? x : y; });
    case Code::kMin:
      return Binary(a, ra, b, rb, out, len, [](T x, T y) { return x < y || std::isnan(x) ? x : y; });
    case Code::kSqDiff:
      return Binary(a, ra, b, rb, out, len, [](T x, T y) {
        const T d = x - y;
        return d * d;
      });
  }
}

// Per-thread scratch, grown as needed and never shrunk, so a call after the
// first allocates nothing.
struct Scratch {
  std::vector<const void*> inputs;
  std::vector<unsigned char> repeat;
  std::vector<double> registers;  // as raw storage, aligned below

  template <typename T>
  T* Registers(size_t elements) {
    const size_t doubles = (elements * sizeof(T) + sizeof(double) - 1) / sizeof(double) + 8;
    if (registers.size() < doubles) registers.resize(doubles);
    uintptr_t p = reinterpret_cast<uintptr_t>(registers.data());
    p = (p + 63) & ~uintptr_t{63};
    return reinterpret_cast<T*>(p);
  }
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

class FusedElementwiseKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    dtype_ = attrs.Type("T");
    if (dtype_ != PX_DT_FLOAT && dtype_ != PX_DT_DOUBLE) {
      throw sdk::Error(PX_CODE_UNIMPLEMENTED, "_PlexusFusedElementwise takes float or double");
    }
    num_inputs_ = attrs.Int("N");
    shape_ = attrs.IntList("shape");
    n_ = sdk::FusedShapeElements(shape_);
    const std::vector<sdk::FusedInstruction> program = sdk::ParseFusedProgram(attrs.StringList("program"), num_inputs_);

    // The last instruction that reads each result.
    std::vector<size_t> last_use(program.size());
    for (size_t j = 0; j < program.size(); ++j) {
      last_use[j] = j;
      const sdk::FusedInstruction& ins = program[j];
      for (int k = 0; k < ins.arity; ++k) {
        const sdk::FusedOperand& o = k == 0 ? ins.a : ins.b;
        if (o.kind == sdk::FusedOperand::kResult) last_use[o.index] = j;
      }
    }
    // Compile, giving each result the lowest free register. The written
    // register is taken before the operands' registers are freed, so a step
    // never writes over its own operands (the loops stay free of aliasing).
    std::vector<int> reg_of(program.size(), -1);
    std::vector<bool> busy;
    for (size_t j = 0; j < program.size(); ++j) {
      const sdk::FusedInstruction& ins = program[j];
      Step s;
      s.code = CodeOf(ins.op, &s.un);
      if (s.code != Code::kUnary) s.wide = WideOp(s.code);
      s.binary = ins.arity == 2;
      for (int k = 0; k < ins.arity; ++k) {
        const sdk::FusedOperand& o = k == 0 ? ins.a : ins.b;
        Operand& to = k == 0 ? s.a : s.b;
        switch (o.kind) {
          case sdk::FusedOperand::kInput:
            to = {Operand::kInput, o.index};
            break;
          case sdk::FusedOperand::kResult:
            to = {Operand::kRegister, reg_of[o.index]};
            break;
          case sdk::FusedOperand::kConstant:
            to = {Operand::kConstant, k};
            s.constant_f[k] = static_cast<float>(o.value);
            s.constant_d[k] = o.value;
            break;
        }
      }
      if (j + 1 < program.size()) {
        int r = 0;
        while (r < static_cast<int>(busy.size()) && busy[r]) ++r;
        if (r == static_cast<int>(busy.size())) busy.push_back(false);
        busy[r] = true;
        reg_of[j] = s.out = r;
      }
      for (int k = 0; k < ins.arity; ++k) {
        const sdk::FusedOperand& o = k == 0 ? ins.a : ins.b;
        if (o.kind == sdk::FusedOperand::kResult && last_use[o.index] == j) busy[reg_of[o.index]] = false;
      }
      // A result nobody reads frees its register at once.
      if (s.out >= 0 && last_use[j] == j) busy[s.out] = false;
      steps_.push_back(s);
    }
    num_registers_ = static_cast<int64_t>(busy.size());
  }

  void Compute(sdk::Call& call) override {
    if (dtype_ == PX_DT_FLOAT) {
      Run<float>(call);
    } else {
      Run<double>(call);
    }
  }

 private:
  template <typename T>
  void Run(sdk::Call& call) {
    const size_t num_inputs = call.num_inputs();
    PX_SDK_CHECK(static_cast<int64_t>(num_inputs) == num_inputs_,
                 "_PlexusFusedElementwise: %zu inputs, the program takes %lld", num_inputs,
                 static_cast<long long>(num_inputs_));
    Scratch& scratch = ThreadScratch();
    if (scratch.inputs.size() < num_inputs) {
      scratch.inputs.resize(num_inputs);
      scratch.repeat.resize(num_inputs);
    }
    const int64_t n = n_;
    for (size_t i = 0; i < num_inputs; ++i) {
      const DLTensor& t = call.input(i);
      PX_SDK_CHECK(sdk::DtypeOf(t) == dtype_, "_PlexusFusedElementwise: input %zu is %s, expected %s", i,
                   sdk::DtypeName(sdk::DtypeOf(t)), sdk::DtypeName(dtype_));
      const int64_t m = px_sdk_num_elements(&t);
      PX_SDK_CHECK(m == n || m == 1, "_PlexusFusedElementwise: input %zu has %lld elements, expected %lld or 1", i,
                   static_cast<long long>(m), static_cast<long long>(n));
      PX_SDK_CHECK(m <= 1 || px_sdk_is_contiguous(&t), "_PlexusFusedElementwise: input %zu is not contiguous", i);
      scratch.inputs[i] = px_sdk_data(&t);
      scratch.repeat[i] = m == 1 && n != 1;
    }
    T* y = call.AllocateOutput<T>(0, shape_);
    if (n == 0) return;
    const int64_t tile = std::min(n, kTile);
    const int64_t stride = (tile + kAlignElements - 1) / kAlignElements * kAlignElements;
    const void* const* inputs = scratch.inputs.data();
    const unsigned char* repeat = scratch.repeat.data();
    const int64_t tiles = (n + tile - 1) / tile;
    // Large outputs on several threads (OpenMP, like the epilogues), each
    // with the registers of its own thread's scratch.
#pragma omp parallel for schedule(static) if (tiles > 1 && n >= kParallelElements)
    for (int64_t t = 0; t < tiles; ++t) {
      T* regs = ThreadScratch().Registers<T>(static_cast<size_t>(num_registers_ * stride));
      RunTile<T>(inputs, repeat, regs, stride, t * tile, std::min(tile, n - t * tile), y);
    }
  }

  // The program over output elements [start, start + len).
  template <typename T>
  void RunTile(const void* const* inputs, const unsigned char* repeat, T* regs, int64_t stride,
               int64_t start, int64_t len, T* y) const {
    for (const Step& s : steps_) {
      auto operand = [&](const Operand& o, int k, bool* rep) -> const T* {
        switch (o.kind) {
          case Operand::kInput: {
            const T* x = static_cast<const T*>(inputs[o.index]);
            *rep = repeat[o.index] != 0;
            return *rep ? x : x + start;
          }
          case Operand::kRegister:
            *rep = false;
            return regs + o.index * stride;
          case Operand::kConstant:
            break;
        }
        *rep = true;
        if constexpr (std::is_same_v<T, float>) {
          return &s.constant_f[k];
        } else {
          return &s.constant_d[k];
        }
      };
      bool ra = false, rb = false;
      const T* a = operand(s.a, 0, &ra);
      const T* b = s.binary ? operand(s.b, 1, &rb) : nullptr;
      T* out = s.out >= 0 ? regs + s.out * stride : y + start;
      RunStep<T>(s, float_steps_, a, ra, b, rb, out, len);
    }
  }

  PX_DataType dtype_ = PX_DT_FLOAT;
  int64_t num_inputs_ = 0;
  sdk::Shape shape_;
  int64_t n_ = 0;
  std::vector<Step> steps_;
  int64_t num_registers_ = 0;
  const fused_steps::StepFn float_steps_ = fused_steps::WidestSteps();
};

}  // namespace

PX_Status* RegisterFusedElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<FusedElementwiseKernel>(
      info, registrar, sdk::sig::kPlexusFusedElementwise, {{PX_DT_FLOAT, PX_DT_DOUBLE}});
}

}  // namespace plexus::cpu
