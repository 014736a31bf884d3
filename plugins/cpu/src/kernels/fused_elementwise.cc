// CPU kernel of _PlexusFusedElementwise (sdk/fused_elementwise.h): the tree
// of elementwise ops the optimizer fused runs over tiles of the output, each
// instruction over the whole tile with the same vectorized code as the
// separate kernels (ew::RunUnary, ew::RunActivation, ew::RunBinary), so the
// results equal the separate nodes' while the tile stays in cache and one
// launch replaces many.
#include <algorithm>
#include <vector>

#include "kernels/elementwise_impl.h"
#include "kernels/fused_epilogue.h"
#include "plexus/sdk/fused_elementwise.h"

namespace plexus::cpu {
namespace {

constexpr int64_t kTile = 1024;

struct Step {
  enum Kind { kUnary, kActivation, kBinary } kind;
  ew::Un un = ew::Un::kNeg;
  ew::Act act = ew::Act::kRelu;
  ew::Bin bin = ew::Bin::kAdd;
  sdk::FusedOperand a, b;
};

Step Compile(const sdk::FusedInstruction& ins) {
  Step s;
  s.a = ins.a;
  s.b = ins.b;
  static const std::pair<const char*, ew::Un> kUnary[] = {
      {"Neg", ew::Un::kNeg},       {"Abs", ew::Un::kAbs},     {"Exp", ew::Un::kExp},
      {"Log", ew::Un::kLog},       {"Sqrt", ew::Un::kSqrt},   {"Rsqrt", ew::Un::kRsqrt},
      {"Square", ew::Un::kSquare}, {"Reciprocal", ew::Un::kReciprocal},
      {"Tanh", ew::Un::kTanh},     {"Sigmoid", ew::Un::kSigmoid}};
  for (const auto& [name, un] : kUnary) {
    if (ins.op == name) {
      s.kind = Step::kUnary;
      s.un = un;
      return s;
    }
  }
  if (ins.op == "Relu" || ins.op == "Relu6") {
    s.kind = Step::kActivation;
    s.act = ins.op == "Relu" ? ew::Act::kRelu : ew::Act::kRelu6;
    return s;
  }
  static const std::pair<const char*, ew::Bin> kBinary[] = {
      {"Add", ew::Bin::kAdd},     {"AddV2", ew::Bin::kAdd},   {"Sub", ew::Bin::kSub},
      {"Mul", ew::Bin::kMul},     {"Div", ew::Bin::kDiv},     {"RealDiv", ew::Bin::kDiv},
      {"Maximum", ew::Bin::kMax}, {"Minimum", ew::Bin::kMin}, {"SquaredDifference", ew::Bin::kSqDiff}};
  for (const auto& [name, bin] : kBinary) {
    if (ins.op == name) {
      s.kind = Step::kBinary;
      s.bin = bin;
      return s;
    }
  }
  throw sdk::Error(PX_CODE_UNIMPLEMENTED, "_PlexusFusedElementwise: op '" + ins.op + "' cannot be fused");
}

class FusedElementwiseKernel : public sdk::OpKernel {
 public:
  void Init(sdk::Attrs& attrs) override {
    for (const sdk::FusedInstruction& ins : sdk::ParseFusedProgram(attrs.StringList("program"), attrs.Int("N"))) {
      steps_.push_back(Compile(ins));
    }
    shape_ = attrs.IntList("shape");
  }

  void Compute(sdk::Call& call) override {
    const int64_t n = sdk::NumElements(shape_);
    std::vector<bool> scalar(call.num_inputs());
    for (size_t i = 0; i < call.num_inputs(); ++i) {
      const int64_t m = sdk::NumElements(call.input_shape(i));
      PX_SDK_CHECK(m == n || m == 1, "_PlexusFusedElementwise: input %zu has %lld elements, expected %lld or 1", i,
                   static_cast<long long>(m), static_cast<long long>(n));
      scalar[i] = m == 1 && n != 1;
    }
    sdk::VisitFloat(call.input_dtype(0), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        T* y = call.AllocateOutput<T>(0, shape_);
        // One register of kTile values per instruction.
        std::vector<T> regs(steps_.size() * static_cast<size_t>(std::min(n, kTile)));
        for (int64_t start = 0; start < n; start += kTile) {
          const int64_t len = std::min(kTile, n - start);
          auto reg = [&](int j) { return regs.data() + static_cast<size_t>(j) * std::min(n, kTile); };
          // An operand's data for this tile and whether it repeats one value.
          auto operand = [&](const sdk::FusedOperand& o, bool* repeat) -> const T* {
            if (!o.is_input) {
              *repeat = false;
              return reg(o.index);
            }
            const T* x = call.input<T>(o.index);
            *repeat = scalar[o.index];
            return *repeat ? x : x + start;
          };
          for (size_t j = 0; j < steps_.size(); ++j) {
            const Step& s = steps_[j];
            T* out = reg(static_cast<int>(j));
            bool ra = false, rb = false;
            const T* a = operand(s.a, &ra);
            if (s.kind == Step::kBinary) {
              const T* b = operand(s.b, &rb);
              const ew::Shape shapes[2] = {ew::Shape{ra ? 1 : len}, ew::Shape{rb ? 1 : len}};
              ew::Plan<2> plan;
              ew::MakePlan<2>(shapes, &plan);
              if (ra && rb) {
                // Both repeat: compute one value and repeat it.
                ew::RunBinary(s.bin, plan, a, b, out);
                std::fill(out + 1, out + len, out[0]);
              } else {
                ew::RunBinary(s.bin, plan, a, b, out);
              }
              continue;
            }
            if (ra) {  // a repeated input: expand it first
              std::fill(out, out + len, a[0]);
              a = out;
            }
            if (s.kind == Step::kUnary) {
              ew::RunUnary(s.un, a, out, len);
            } else {
              ew::RunActivation(s.act, 0.0f, false, a, out, len);
            }
          }
          std::copy(reg(static_cast<int>(steps_.size()) - 1), reg(static_cast<int>(steps_.size()) - 1) + len,
                    y + start);
        }
      } else {
        throw sdk::Error(PX_CODE_UNIMPLEMENTED, "_PlexusFusedElementwise takes float or double");
      }
    });
  }

 private:
  std::vector<Step> steps_;
  sdk::Shape shape_;
};

}  // namespace

PX_Status* RegisterFusedElementwiseKernels(sdk::RegistrationInfo* info, PX_KernelRegistrar* registrar) {
  return sdk::RegisterKernel<FusedElementwiseKernel>(info, registrar, "_PlexusFusedElementwise",
                                                     {{"T", {PX_DT_FLOAT, PX_DT_DOUBLE}}});
}

}  // namespace plexus::cpu
