// Attribute inference from input dtypes (plexus/graph.h, InferOpAttrs): what
// eager execution and the graph builder fill in when a caller leaves type
// attributes out.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plexus/graph.h"

namespace plexus {
namespace {

void SetType(AttrMap* attrs, const std::string& name, DataType type) {
  tf::AttrValue v;
  v.set_type(static_cast<tf::DataType>(type));
  attrs->emplace(name, std::move(v));
}

}  // namespace

absl::Status InferOpAttrs(const OpDef& def, absl::Span<const DataType> types, AttrMap* attrs) {
  // How many inputs each argument takes: fixed by its count attribute or
  // type list when given; a single open-ended argument takes the rest.
  const int num_args = static_cast<int>(def.inputs.size());
  std::vector<int64_t> count(num_args, 1);
  int open = -1;
  int64_t fixed = 0;
  for (int a = 0; a < num_args; ++a) {
    const ArgSpec& arg = def.inputs[a];
    if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) {
      const std::string& attr = arg.number_attr.empty() ? arg.type_list_attr : arg.number_attr;
      auto it = attrs->find(attr);
      if (it != attrs->end()) {
        count[a] = arg.number_attr.empty() ? it->second.list().type_size() : it->second.i();
      } else if (open < 0) {
        open = a;
        continue;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "op ", def.name, ": give attribute '", attr, "' (inputs '", def.inputs[open].name,
            "' and '", arg.name, "' both take a list)"));
      }
    }
    fixed += count[a];
  }
  const int64_t n = static_cast<int64_t>(types.size());
  if (open >= 0) {
    count[open] = n - fixed;
    if (count[open] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("op ", def.name, " takes at least ", fixed,
                                                     " inputs, got ", n));
    }
  } else if (fixed != n) {
    std::vector<std::string> names;
    for (const ArgSpec& arg : def.inputs) names.push_back(arg.name);
    return absl::InvalidArgumentError(absl::StrCat("op ", def.name, " takes ", fixed, " input(s) (",
                                                   absl::StrJoin(names, ", "), "), got ", n));
  }
  int64_t pos = 0;
  for (int a = 0; a < num_args; ++a) {
    const ArgSpec& arg = def.inputs[a];
    const int64_t c = count[a];
    if (!arg.number_attr.empty() && attrs->find(arg.number_attr) == attrs->end()) {
      tf::AttrValue v;
      v.set_i(c);
      attrs->emplace(arg.number_attr, std::move(v));
    }
    if (!arg.type_list_attr.empty() && attrs->find(arg.type_list_attr) == attrs->end()) {
      tf::AttrValue v;
      for (int64_t k = 0; k < c; ++k) v.mutable_list()->add_type(static_cast<tf::DataType>(types[pos + k]));
      attrs->emplace(arg.type_list_attr, std::move(v));
    }
    if (!arg.type_attr.empty() && c > 0) {
      auto it = attrs->find(arg.type_attr);
      if (it == attrs->end()) {
        SetType(attrs, arg.type_attr, types[pos]);
      }
    }
    pos += c;
  }
  return absl::OkStatus();
}

}  // namespace plexus
