// The kernels section: every registered kernel against the reference
// kernels, for every dtype it claims, on the catalog's cases, with outputs
// both allocated by the host and left to the kernel.
#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cases.h"
#include "checks.h"
#include "plexus/op_def.h"

namespace plexus::conformance {
namespace {

// The dtypes the tool can generate and compare.
const DataType kTestTypes[] = {DataType::kFloat,  DataType::kDouble, DataType::kHalf,
                               DataType::kBFloat16, DataType::kInt8, DataType::kInt16,
                               DataType::kInt32,  DataType::kInt64,  DataType::kUInt8,
                               DataType::kUInt16, DataType::kUInt32, DataType::kUInt64,
                               DataType::kBool};

bool Testable(DataType t) {
  return std::find(std::begin(kTestTypes), std::end(kTestTypes), t) != std::end(kTestTypes);
}

// The op's element type attribute: "T", "dtype" or "SrcT" when it has one,
// else its first type attribute (the rule docs/ops.md uses).
std::string ElementAttr(const OpDef& def) {
  for (const char* preferred : {"T", "dtype", "SrcT"}) {
    const AttrSpec* a = def.FindAttr(preferred);
    if (a != nullptr && a->type == "type") return preferred;
  }
  for (const AttrSpec& a : def.attrs) {
    if (a.type == "type") return a.name;
  }
  return "";
}

// Every dtype some kernel of `op` accepts for `attr`.
std::vector<DataType> ClaimedTypes(const std::vector<const KernelInfo*>& kernels, const OpDef& def,
                                   const std::string& attr) {
  std::vector<DataType> types;
  auto add = [&](DataType t) {
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  };
  for (const KernelInfo* k : kernels) {
    bool constrained = false;
    for (const auto& [name, allowed] : k->type_constraints) {
      if (name != attr) continue;
      constrained = true;
      for (DataType t : allowed) add(t);
    }
    if (!constrained) {
      // Unconstrained: whatever the op allows.
      const AttrSpec* spec = def.FindAttr(attr);
      if (spec != nullptr && !spec->allowed_types.empty()) {
        for (DataType t : spec->allowed_types) add(t);
      } else {
        for (DataType t : kTestTypes) add(t);
      }
    }
  }
  std::sort(types.begin(), types.end(), [](DataType a, DataType b) {
    auto rank = [](DataType t) {
      auto it = std::find(std::begin(kTestTypes), std::end(kTestTypes), t);
      return it == std::end(kTestTypes) ? 100 + static_cast<int>(t) : static_cast<int>(it - std::begin(kTestTypes));
    };
    return rank(a) < rank(b);
  });
  return types;
}

uint32_t Seed(const std::string& op, DataType dtype, uint32_t seed) {
  uint32_t h = 2166136261u ^ seed;
  for (char c : op) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return (h ^ static_cast<uint32_t>(dtype)) * 16777619u;
}

const char* ModeName(OutputMode mode) {
  return mode == OutputMode::kHostAllocated ? "host-allocated outputs" : "kernel-allocated outputs";
}

struct CaseOutcome {
  enum Kind { kPassed, kFailed, kSkipped } kind;
  std::string detail;
};

// Runs one case on both devices and compares.
CaseOutcome RunCase(const Case& c, HarnessDevice& device, PX_Stream* stream, HarnessDevice& reference,
                    PX_Stream* ref_stream, std::vector<PassingCase>* passing) {
  auto graph_or = OneNodeGraph(c.op(), c.inputs(), c.attrs());
  if (!graph_or.ok()) {
    return {CaseOutcome::kFailed,
            absl::StrCat("the catalog case does not import (a bug in the catalog): ", graph_or.status().message())};
  }
  std::shared_ptr<Graph> graph(std::move(*graph_or));
  const Node* node = OpNode(*graph);
  const KernelInfo* kernel = device.plugin().FindKernel(*node);
  if (kernel == nullptr) {
    return {CaseOutcome::kSkipped, "no kernel of the plugin accepts this case's type attributes"};
  }
  const KernelInfo* ref_kernel = reference.plugin().FindKernel(*node);
  if (ref_kernel == nullptr) return {CaseOutcome::kSkipped, "no reference kernel for this case"};
  for (const Tensor& t : c.inputs()) {
    if (t.dtype() == DataType::kString && device.table().abi_minor < 2) {
      return {CaseOutcome::kSkipped, "string inputs need ABI 0.2; the plugin chose an older minor"};
    }
  }

  // The reference result (a refusal at create counts as a refusal).
  auto ref_instance = KernelInstance::Create(&reference, ref_kernel, node);
  absl::StatusOr<std::vector<Tensor>> want =
      ref_instance.ok() ? (*ref_instance)->Run(c.inputs(), ref_stream, OutputMode::kHostAllocated)
                        : absl::StatusOr<std::vector<Tensor>>(ref_instance.status());
  if (!want.ok() && KernelInstance::IsShapeRefusal(want.status())) {
    return {CaseOutcome::kSkipped, absl::StrCat("the op's shape function refuses the case, so no kernel runs: ",
                                                want.status().message())};
  }
  if (c.expected_error().has_value()) {
    if (want.ok()) return {CaseOutcome::kFailed, "the reference accepted an error case (a bug in the catalog)"};
    if (want.status().code() != *c.expected_error()) {
      return {CaseOutcome::kFailed,
              absl::StrCat("the reference refused with ", DescribeStatus(want.status()), ", the catalog expects ",
                           absl::StatusCodeToString(*c.expected_error()))};
    }
  } else if (!want.ok()) {
    return {CaseOutcome::kFailed,
            absl::StrCat("the reference kernel failed (a bug in the catalog or the reference): ",
                         DescribeStatus(want.status()))};
  }

  auto instance = KernelInstance::Create(&device, kernel, node);
  if (!instance.ok()) {
    if (c.expected_error().has_value() && instance.status().code() == want.status().code()) {
      return {CaseOutcome::kPassed, ""};
    }
    return {CaseOutcome::kFailed, absl::StrCat("create failed: ", DescribeStatus(instance.status()))};
  }
  for (OutputMode mode : {OutputMode::kHostAllocated, OutputMode::kKernelAllocated}) {
    auto got = (*instance)->Run(c.inputs(), stream, mode);
    if (c.expected_error().has_value()) {
      if (got.ok()) {
        return {CaseOutcome::kFailed,
                absl::StrCat("succeeded with ", ModeName(mode), "; the reference refuses it with ",
                             DescribeStatus(want.status()))};
      }
      if (got.status().code() != want.status().code()) {
        return {CaseOutcome::kFailed,
                absl::StrCat("refused with ", DescribeStatus(got.status()), " (", ModeName(mode),
                             "); the reference with ", DescribeStatus(want.status()))};
      }
      // The stream stays usable after a kernel's own error.
      absl::Status s = device.Check(device.table().stream_get_status(device.handle(), stream));
      if (!s.ok()) {
        return {CaseOutcome::kFailed,
                absl::StrCat("a kernel error left the stream failed (", DescribeStatus(s),
                             "); an error returned by compute fails that launch only")};
      }
      continue;
    }
    if (!got.ok()) {
      return {CaseOutcome::kFailed, absl::StrCat(ModeName(mode), ": ", DescribeStatus(got.status()))};
    }
    if (got->size() != want->size()) {
      return {CaseOutcome::kFailed, absl::StrCat(ModeName(mode), ": ", got->size(), " outputs, the reference has ",
                                                 want->size())};
    }
    for (size_t k = 0; k < got->size(); ++k) {
      Tolerance tol = c.tolerance().value_or(DefaultTolerance((*want)[k].dtype()));
      absl::Status s = CompareTensors((*got)[k], (*want)[k], tol);
      if (!s.ok()) {
        return {CaseOutcome::kFailed, absl::StrCat(ModeName(mode), ": output ", k, ": ", s.message())};
      }
    }
  }
  if (passing != nullptr && !c.expected_error().has_value()) {
    passing->push_back(PassingCase{c.op(), c.label(), graph, kernel, c.inputs(), *std::move(want), c.tolerance()});
  }
  return {CaseOutcome::kPassed, ""};
}

}  // namespace

KernelRun CheckKernels(const CheckOptions& options, HarnessDevice& device, HarnessDevice& reference,
                       Report& report) {
  KernelRun run;
  std::vector<PassingCase>& robustness_cases = run.passing;
  const PX_PluginTable& t = device.table();
  PX_Stream* stream = nullptr;
  PX_Stream* ref_stream = nullptr;
  absl::Status s = device.Check(t.stream_create(device.handle(), &stream));
  if (s.ok()) s = reference.Check(reference.table().stream_create(reference.handle(), &ref_stream));
  if (!s.ok()) {
    report.Fail("kernels", "setup", absl::StrCat("stream_create: ", DescribeStatus(s)));
    if (stream != nullptr) t.stream_destroy(device.handle(), stream);
    return run;
  }

  // Group the plugin's kernels by op.
  std::map<std::string, std::vector<const KernelInfo*>> by_op;
  for (const KernelInfo& k : device.plugin().kernels()) {
    if (!options.ops.empty() && options.ops.count(k.op) == 0) continue;
    by_op[k.op].push_back(&k);
  }
  if (by_op.empty()) {
    report.Skip("kernels", "coverage",
                options.ops.empty() ? "the plugin registers no kernels" : "no kernel of the selected ops");
  }
  for (const auto& [op, kernels] : by_op) {
    const OpDef* def = OpRegistry::Global().Find(op);
    if (def == nullptr) {
      report.AddCell({op, "-", Outcome::kSkip, 0, 0, "Plexus does not define this op (see abi.kernel_registration)"});
      continue;
    }
    std::string attr = ElementAttr(*def);
    std::vector<DataType> types = attr.empty() ? std::vector<DataType>{DataType::kInvalid}
                                               : ClaimedTypes(kernels, *def, attr);
    const CaseGenerator* generator = FindCaseGenerator(op);
    bool op_has_passing = false;
    for (DataType dtype : types) {
      CoverageCell cell;
      cell.op = op;
      cell.dtype = dtype == DataType::kInvalid ? "-" : DataTypeName(dtype);
      if (dtype != DataType::kInvalid && !Testable(dtype)) {
        cell.outcome = Outcome::kSkip;
        cell.detail = absl::StrCat("the tool cannot generate or compare ", cell.dtype, " tensors yet");
        report.AddCell(cell);
        continue;
      }
      if (generator == nullptr) {
        cell.outcome = Outcome::kSkip;
        cell.detail = "the conformance catalog (sdk/conformance/cases/) has no cases for this op yet";
        report.AddCell(cell);
        continue;
      }
      report.Begin("kernels", absl::StrCat(op, " ", cell.dtype));
      std::mt19937 rng(Seed(op, dtype, options.seed));
      std::vector<Case> cases = (*generator)(CaseContext{op, dtype, rng});
      std::vector<std::string> skip_reasons;
      std::string first_failure;
      for (const Case& c : cases) {
        CaseOutcome outcome = RunCase(c, device, stream, reference, ref_stream,
                                      op_has_passing ? nullptr : &robustness_cases);
        if (outcome.kind == CaseOutcome::kSkipped) {
          if (std::find(skip_reasons.begin(), skip_reasons.end(), outcome.detail) == skip_reasons.end()) {
            skip_reasons.push_back(outcome.detail);
          }
          continue;
        }
        cell.cases_run++;
        if (c.expected_error().has_value()) {
          run.error_cases_run++;
          run.error_cases_passed += outcome.kind == CaseOutcome::kPassed;
        }
        if (outcome.kind == CaseOutcome::kPassed) {
          cell.cases_passed++;
          if (!c.expected_error().has_value() && !op_has_passing) op_has_passing = true;
        } else if (first_failure.empty()) {
          first_failure = absl::StrCat("case '", c.Describe(), "': ", outcome.detail);
        }
      }
      if (!first_failure.empty()) {
        cell.outcome = Outcome::kFail;
        cell.detail = first_failure;
      } else if (cell.cases_run == 0) {
        cell.outcome = Outcome::kSkip;
        cell.detail = cases.empty() ? "the catalog generates no cases for this dtype"
                                    : absl::StrCat("every case was skipped: ", absl::StrJoin(skip_reasons, "; "));
      } else {
        cell.outcome = Outcome::kPass;
        cell.detail = skip_reasons.empty()
                          ? absl::StrCat(cell.cases_passed, " cases")
                          : absl::StrCat(cell.cases_passed, " cases; some skipped: ", absl::StrJoin(skip_reasons, "; "));
      }
      report.AddCell(cell);
    }
  }
  t.stream_destroy(device.handle(), stream);
  reference.table().stream_destroy(reference.handle(), ref_stream);
  return run;
}

}  // namespace plexus::conformance
