// The core's metadata ops (views.h).
#include "exec/views.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "exec/launch.h"
#include "plexus/status.h"

namespace plexus {
namespace {

// Names the node in errors, built only when there is one.
struct Who {
  const Node& node;
  const Device& device;
  std::string (*where)(const Node& node, const Device& device);
  std::string operator()() const { return where(node, device); }
};

// A host tensor of `dtype` (int32 or int64) holding `values`; int32 values
// must fit, as TensorFlow's kernels require.
absl::StatusOr<Tensor> IndexTensor(const Who& who, DataType dtype, Shape shape,
                                   const std::vector<int64_t>& values) {
  PX_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateHost(dtype, std::move(shape)));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::kInt32) {
      if (values[i] > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(absl::StrCat(who(), ": ", values[i],
                                                       " does not fit the int32 output; use out_type "
                                                       "int64"));
      }
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<int64_t>()[i] = values[i];
    }
  }
  return t;
}

absl::Status ShapeValues(const Node& node, const Who& who, absl::Span<const Tensor* const> inputs,
                         std::vector<Tensor>* outputs) {
  outputs->assign(node.num_outputs(), Tensor());
  for (int k = 0; k < node.num_outputs(); ++k) {
    const DataType dtype = node.output_types[k];
    const Shape& in = inputs[node.op == "ShapeN" ? k : 0]->shape();
    absl::StatusOr<Tensor> out;
    if (node.op == "Shape" || node.op == "ShapeN") {
      out = IndexTensor(who, dtype, {static_cast<int64_t>(in.size())},
                        std::vector<int64_t>(in.begin(), in.end()));
    } else if (node.op == "Size") {
      out = IndexTensor(who, dtype, {}, {NumElements(in)});
    } else if (node.op == "Rank") {
      out = IndexTensor(who, dtype, {}, {static_cast<int64_t>(in.size())});
    } else {
      return absl::UnimplementedError(absl::StrCat(who(), ": no shape values for this op"));
    }
    if (!out.ok()) return out.status();
    (*outputs)[k] = *std::move(out);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunMetadataOp(const Node& node, absl::Span<const Tensor* const> inputs, bool static_shapes,
                           const Device& device,
                           std::string (*where)(const Node& node, const Device& device),
                           std::vector<Tensor>* outputs) {
  const Who who{node, device, where};
  if (node.def->outputs_from_shapes) return ShapeValues(node, who, inputs, outputs);
  const Tensor& input = *inputs[0];
  Shape shape;
  if (static_shapes) {
    const std::vector<int64_t> dims = node.output_shapes[0].dim_vector();
    shape.assign(dims.begin(), dims.end());
  } else {
    std::vector<PartialShape> input_shapes;
    std::vector<const Tensor*> input_values;
    for (const Tensor* t : inputs) {
      input_shapes.push_back(PartialShape(t->shape()));
      input_values.push_back(t->host_readable() ? t : nullptr);
    }
    InferenceContext ctx(node, std::move(input_shapes), std::move(input_values));
    if (absl::Status s = InferShapes(ctx); !s.ok()) return NameShapeError(node, who(), s);
    if (!ctx.output(0).fully_defined()) {
      return absl::InternalError(absl::StrCat(who(), ": the output shape is not known from ",
                                              "the inputs"));
    }
    const std::vector<int64_t> dims = ctx.output(0).dim_vector();
    shape.assign(dims.begin(), dims.end());
  }
  if (NumElements(shape) != input.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat(who(), ": cannot view ",
                                                   ShapeToString(input.shape()), " as ",
                                                   ShapeToString(shape)));
  }
  outputs->assign(1, Tensor(input.dtype(), std::move(shape), input.buffer()));
  return absl::OkStatus();
}

}  // namespace plexus
