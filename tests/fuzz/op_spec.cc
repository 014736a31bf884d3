#include "op_spec.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

namespace plexus {
namespace fuzz {
namespace {

constexpr int kMaxListLength = 4;

const char* const kStrings[] = {"SAME", "VALID", "EXPLICIT", "NHWC", "NCHW", "NDHWC", "NCDHW",
                                "NWC",  "NCW",   "",         "ij,jk->ik", "...i,i->...",
                                "bilinear", "nearest", "HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN",
                                "UTF-8", "BYTE", "x", "missing_function"};

int64_t RandomInt(FuzzedDataProvider& p) {
  static constexpr int64_t kEdges[] = {-1, 0, 1, 2, 3, 4, 5, 8, -2, -5, 100,
                                       int64_t{1} << 31, int64_t{1} << 40,
                                       std::numeric_limits<int64_t>::max(),
                                       std::numeric_limits<int64_t>::min()};
  return p.ConsumeProbability<float>() < 0.8f ? p.ConsumeIntegralInRange<int64_t>(-3, 6)
                                              : p.PickValueInArray(kEdges);
}

float RandomFloat(FuzzedDataProvider& p) {
  static constexpr float kValues[] = {0.f, 1.f, -1.f, 0.5f, 2.f, 1e-7f, 1e30f, -1e30f,
                                      std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN()};
  return p.PickValueInArray(kValues);
}

DataType RandomType(FuzzedDataProvider& p, const AttrSpec& spec, const std::vector<DataType>& any) {
  const std::vector<DataType>& from = spec.allowed_types.empty() ? any : spec.allowed_types;
  if (from.empty()) return DataType::kFloat;
  return from[p.ConsumeIntegralInRange<size_t>(0, from.size() - 1)];
}

void SetShape(const PartialShape& shape, tf::TensorShapeProto* proto) {
  proto->Clear();
  if (!shape.rank_known()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dims()) proto->add_dim()->set_size(d);
}

int ListLength(FuzzedDataProvider& p, const AttrSpec& spec) {
  int lo = spec.has_minimum ? static_cast<int>(std::min<int64_t>(spec.minimum, kMaxListLength)) : 0;
  // Now and then one short of the minimum: the import must refuse it.
  if (lo > 0 && p.ConsumeProbability<float>() < 0.05f) --lo;
  return p.ConsumeIntegralInRange<int>(std::max(lo, 0), kMaxListLength);
}

void RandomTensor(FuzzedDataProvider& p, tf::TensorProto* t) {
  if (p.ConsumeBool()) {
    t->set_dtype(tf::DT_INT32);
    const int n = p.ConsumeIntegralInRange<int>(0, 3);
    if (n != 1 || p.ConsumeBool()) t->mutable_tensor_shape()->add_dim()->set_size(n);
    for (int i = 0; i < n; ++i) t->add_int_val(static_cast<int32_t>(RandomInt(p)));
  } else {
    t->set_dtype(tf::DT_FLOAT);
    t->add_float_val(RandomFloat(p));
  }
}

void RandomAttr(FuzzedDataProvider& p, const AttrSpec& spec, const std::set<std::string>& counts,
                const std::vector<DataType>& any, tf::AttrValue* value) {
  const std::string& type = spec.type;
  // Type attributes always get a fresh pick (their defaults are fine too, but
  // the dtype is what the kernels differ in); others keep their default
  // half of the time, as most real nodes do.
  if (spec.has_default && type != "type" && type != "list(type)" && p.ConsumeBool()) {
    *value = spec.default_value;
    return;
  }
  if (counts.count(spec.name)) {  // N of "x: N * T": a small count
    const int64_t lo = spec.has_minimum ? std::max<int64_t>(spec.minimum, 0) : 0;
    value->set_i(p.ConsumeIntegralInRange<int64_t>(std::min<int64_t>(lo, kMaxListLength),
                                                   kMaxListLength));
  } else if (type == "type") {
    value->set_type(static_cast<tf::DataType>(RandomType(p, spec, any)));
  } else if (type == "int") {
    value->set_i(RandomInt(p));
  } else if (type == "float") {
    value->set_f(RandomFloat(p));
  } else if (type == "bool") {
    value->set_b(p.ConsumeBool());
  } else if (type == "string") {
    value->set_s(p.PickValueInArray(kStrings));
  } else if (type == "shape") {
    SetShape(RandomPartialShape(p, true), value->mutable_shape());
  } else if (type == "tensor") {
    RandomTensor(p, value->mutable_tensor());
  } else if (type == "func") {
    value->mutable_func()->set_name("missing_function");
  } else if (type.rfind("list(", 0) == 0) {
    auto* list = value->mutable_list();
    const int n = ListLength(p, spec);
    for (int i = 0; i < n; ++i) {
      if (type == "list(type)") list->add_type(static_cast<tf::DataType>(RandomType(p, spec, any)));
      else if (type == "list(int)") list->add_i(RandomInt(p));
      else if (type == "list(float)") list->add_f(RandomFloat(p));
      else if (type == "list(bool)") list->add_b(p.ConsumeBool());
      else if (type == "list(string)") list->add_s(p.PickValueInArray(kStrings));
      else if (type == "list(shape)") SetShape(RandomPartialShape(p, true), list->add_shape());
      else if (type == "list(tensor)") RandomTensor(p, list->add_tensor());
      else if (type == "list(func)") list->add_func()->set_name("missing_function");
    }
  } else if (spec.has_default) {
    *value = spec.default_value;
  }
}

}  // namespace

PartialShape RandomPartialShape(FuzzedDataProvider& p, bool huge) {
  if (p.ConsumeProbability<float>() < 0.1f) return PartialShape::Unknown();
  const int rank = p.ConsumeIntegralInRange<int>(0, 5);
  Shape dims;
  for (int i = 0; i < rank; ++i) {
    const float r = p.ConsumeProbability<float>();
    if (r < 0.15f) dims.push_back(-1);
    else if (huge && r > 0.97f) dims.push_back(p.PickValueInArray({int64_t{1} << 31, int64_t{1} << 62}));
    else dims.push_back(p.ConsumeIntegralInRange<int64_t>(0, 5));
  }
  return PartialShape(std::move(dims));
}

void MakeOpCall(FuzzedDataProvider& p, const std::vector<const OpDef*>& ops,
                const std::vector<DataType>& any_types, OpCall* call) {
  call->def = ops[p.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  const OpDef& def = *call->def;
  std::set<std::string> counts;
  for (const ArgSpec& arg : def.inputs) {
    if (!arg.number_attr.empty()) counts.insert(arg.number_attr);
  }
  for (const ArgSpec& arg : def.outputs) {
    if (!arg.number_attr.empty()) counts.insert(arg.number_attr);
  }
  call->attrs.clear();
  for (const AttrSpec& spec : def.attrs) RandomAttr(p, spec, counts, any_types, &call->attrs[spec.name]);

  call->input_types.clear();
  for (const ArgSpec& arg : def.inputs) {
    DataType type = arg.fixed_type;
    if (!arg.type_attr.empty()) {
      auto it = call->attrs.find(arg.type_attr);
      type = it != call->attrs.end() ? static_cast<DataType>(it->second.type()) : DataType::kFloat;
    }
    if (!arg.type_list_attr.empty()) {
      auto it = call->attrs.find(arg.type_list_attr);
      if (it == call->attrs.end()) continue;
      for (int t : it->second.list().type()) call->input_types.push_back(static_cast<DataType>(t));
      continue;
    }
    int64_t n = 1;
    if (!arg.number_attr.empty()) {
      auto it = call->attrs.find(arg.number_attr);
      n = it != call->attrs.end() ? std::clamp<int64_t>(it->second.i(), 0, kMaxListLength) : 1;
    }
    for (int64_t i = 0; i < n; ++i) call->input_types.push_back(type);
  }
}

}  // namespace fuzz
}  // namespace plexus
