// tf.Example parsing: ParseExample run eagerly (the core's host kernel, as a
// tf.data pipeline or a serving signature runs it). The input is a batch of
// serialized tf.Example protos cut at kSplit markers; the last byte picks one
// of a few feature specs: dense features of each type with and without
// defaults (a missing one without a default is an error), fixed and
// variable-length shapes, and sparse features of each type. The feature names
// are in example.dict.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "plexus/eager.h"
#include "plexus/tensor.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  plexus::fuzz::QuietLogs();
  plexus::fuzz::FuzzRuntime();
  return 0;
}

namespace tf = ::plexus::tf;

namespace {

using plexus::DataType;
using plexus::Tensor;

struct DenseSpec {
  const char* key;
  DataType dtype;
  std::vector<int64_t> shape;  // -1 first: variable length
  bool has_default;
};

// The dense_defaults input: empty (the feature is required) or, for a
// variable-length feature, the scalar it is padded with, else a full tensor
// of the feature's shape.
Tensor Default(const DenseSpec& spec) {
  plexus::Shape shape;
  int64_t n = 1;
  if (!spec.has_default) {
    shape = {0};
    n = 0;
  } else if (spec.shape.empty() || spec.shape[0] >= 0) {
    for (int64_t d : spec.shape) {
      shape.push_back(d);
      n *= d;
    }
  }
  switch (spec.dtype) {
    case DataType::kFloat: return Tensor::FromVector(DataType::kFloat, shape, std::vector<float>(n, 0.5f));
    case DataType::kInt64: return Tensor::FromVector(DataType::kInt64, shape, std::vector<int64_t>(n, 7));
    default: return Tensor::FromStrings(shape, std::vector<std::string>(n, "default"));
  }
}

void SetTypeList(plexus::AttrMap& attrs, const char* name, const std::vector<DataType>& types) {
  auto* list = attrs[name].mutable_list();
  for (DataType t : types) list->add_type(static_cast<tf::DataType>(t));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static plexus::EagerContext* eager = new plexus::EagerContext(plexus::fuzz::FuzzRuntime());
  static const std::vector<std::vector<DenseSpec>> kDenseSpecs = {
      {{"f", DataType::kFloat, {}, true}, {"i", DataType::kInt64, {2}, true}, {"s", DataType::kString, {}, true}},
      {{"f", DataType::kFloat, {3}, false}, {"i", DataType::kInt64, {}, false}},
      {{"f", DataType::kFloat, {-1}, true}, {"i", DataType::kInt64, {-1, 2}, true}, {"s", DataType::kString, {-1}, true}},
      {{"f", DataType::kFloat, {2, 2}, true}},
      {},
  };
  static const std::vector<std::pair<const char*, DataType>> kSparse = {
      {"sf", DataType::kFloat}, {"si", DataType::kInt64}, {"ss", DataType::kString}};

  FuzzedDataProvider provider(data, size);
  const uint8_t choice = provider.ConsumeIntegral<uint8_t>();
  const auto& dense = kDenseSpecs[choice % kDenseSpecs.size()];
  const size_t num_sparse = (choice / kDenseSpecs.size()) % (kSparse.size() + 1);
  const std::string rest = provider.ConsumeRemainingBytesAsString();
  std::vector<std::string> batch;
  for (absl::string_view part : plexus::fuzz::SplitInput(rest, 8)) batch.emplace_back(part);

  std::vector<Tensor> inputs;
  inputs.push_back(Tensor::FromStrings({static_cast<int64_t>(batch.size())}, batch));
  inputs.push_back(Tensor::FromStrings({0}, {}));  // names
  std::vector<DataType> sparse_types, dense_types;
  for (size_t k = 0; k < num_sparse; ++k) {
    inputs.push_back(Tensor::FromStrings({}, {kSparse[k].first}));
    sparse_types.push_back(kSparse[k].second);
  }
  for (const DenseSpec& spec : dense) inputs.push_back(Tensor::FromStrings({}, {spec.key}));
  plexus::AttrMap attrs;
  auto* shapes = attrs["dense_shapes"].mutable_list();
  for (const DenseSpec& spec : dense) {
    inputs.push_back(Default(spec));
    dense_types.push_back(spec.dtype);
    auto* shape = shapes->add_shape();
    for (int64_t d : spec.shape) shape->add_dim()->set_size(d);
  }
  attrs["Nsparse"].set_i(static_cast<int64_t>(num_sparse));
  attrs["Ndense"].set_i(static_cast<int64_t>(dense.size()));
  SetTypeList(attrs, "sparse_types", sparse_types);
  SetTypeList(attrs, "Tdense", dense_types);
  plexus::fuzz::AbortOnValidationBreach(eager->Execute("ParseExample", inputs, attrs, nullptr).status());
  return 0;
}
