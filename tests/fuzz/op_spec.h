// Random calls of registered ops for the shape-function and eager fuzzers:
// an op picked from a list, a value for each of its attributes of the
// attribute's declared type (often the default, else small, edge or absurd
// values), and the input dtypes those attributes imply.
#ifndef PLEXUS_TESTS_FUZZ_OP_SPEC_H_
#define PLEXUS_TESTS_FUZZ_OP_SPEC_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <string>
#include <vector>

#include "plexus/graph.h"
#include "plexus/op_def.h"

namespace plexus {
namespace fuzz {

struct OpCall {
  const OpDef* def = nullptr;
  AttrMap attrs;
  std::vector<DataType> input_types;  // one per input tensor, lists expanded
};

// The registry's ops for which keep(def) is true, by name.
template <typename Keep>
std::vector<const OpDef*> ListOps(Keep keep) {
  std::vector<const OpDef*> ops;
  for (const std::string& name : OpRegistry::Global().ListOps()) {
    const OpDef* def = OpRegistry::Global().Find(name);
    if (def != nullptr && keep(*def)) ops.push_back(def);
  }
  return ops;
}

// Fills *call from the provider; the dtypes a type attribute may take are
// its allowed ones, or `any_types` when it allows any.
void MakeOpCall(FuzzedDataProvider& provider, const std::vector<const OpDef*>& ops,
                const std::vector<DataType>& any_types, OpCall* call);

// A partial shape: unknown rank now and then, else rank 0 to 5 with unknown,
// zero, small and (when `huge`) enormous dimensions.
PartialShape RandomPartialShape(FuzzedDataProvider& provider, bool huge);

}  // namespace fuzz
}  // namespace plexus

#endif  // PLEXUS_TESTS_FUZZ_OP_SPEC_H_
