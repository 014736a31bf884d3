#include "plexus/op_def.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace plexus {
namespace {

absl::Status SpecError(absl::string_view op, absl::string_view spec,
                       absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("op ", op, ": bad spec '", spec, "': ", why));
}

// Splits "name: rest" into its two trimmed halves.
absl::Status SplitSpec(absl::string_view op, absl::string_view spec,
                       std::string* name, std::string* rest) {
  size_t colon = spec.find(':');
  if (colon == absl::string_view::npos) return SpecError(op, spec, "missing ':'");
  *name = std::string(absl::StripAsciiWhitespace(spec.substr(0, colon)));
  *rest = std::string(absl::StripAsciiWhitespace(spec.substr(colon + 1)));
  if (name->empty() || rest->empty()) return SpecError(op, spec, "empty name or type");
  return absl::OkStatus();
}

absl::StatusOr<tf::AttrValue> ParseDefault(absl::string_view op, absl::string_view spec,
                                           const std::string& type,
                                           absl::string_view text) {
  tf::AttrValue value;
  text = absl::StripAsciiWhitespace(text);
  if (absl::StartsWith(type, "list(")) {
    if (!absl::ConsumePrefix(&text, "[") || !absl::ConsumeSuffix(&text, "]")) {
      return SpecError(op, spec, "a list default must be [...]");
    }
    auto* list = value.mutable_list();
    for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      item = absl::StripAsciiWhitespace(item);
      int64_t i;
      if (type == "list(int)" && absl::SimpleAtoi(item, &i)) {
        list->add_i(i);
      } else if (type == "list(string)") {
        absl::ConsumePrefix(&item, "\"");
        absl::ConsumeSuffix(&item, "\"");
        list->add_s(std::string(item));
      } else {
        return SpecError(op, spec, "unsupported list default");
      }
    }
    return value;
  }
  if (type == "bool") {
    if (text == "true") value.set_b(true);
    else if (text == "false") value.set_b(false);
    else return SpecError(op, spec, "bool default must be true or false");
  } else if (type == "int") {
    int64_t i;
    if (!absl::SimpleAtoi(text, &i)) return SpecError(op, spec, "bad int default");
    value.set_i(i);
  } else if (type == "float") {
    float f;
    if (!absl::SimpleAtof(text, &f)) return SpecError(op, spec, "bad float default");
    value.set_f(f);
  } else if (type == "type") {
    auto t = DataTypeFromName(text);
    if (!t.ok()) return SpecError(op, spec, t.status().message());
    value.set_type(static_cast<tf::DataType>(*t));
  } else if (type == "string") {
    if (!absl::ConsumePrefix(&text, "\"") || !absl::ConsumeSuffix(&text, "\"")) {
      return SpecError(op, spec, "a string default must be quoted");
    }
    value.set_s(std::string(text));
  } else if (type == "shape") {
    if (text != "{ unknown_rank: true }") return SpecError(op, spec, "unsupported shape default");
    value.mutable_shape()->set_unknown_rank(true);
  } else {
    return SpecError(op, spec, "defaults unsupported for this type");
  }
  return value;
}

absl::StatusOr<AttrSpec> ParseAttr(absl::string_view op, absl::string_view spec) {
  AttrSpec attr;
  std::string rest;
  absl::Status s = SplitSpec(op, spec, &attr.name, &rest);
  if (!s.ok()) return s;
  absl::string_view type_text = rest;
  absl::string_view default_text;
  // The default follows the first '=' that is not part of ">=".
  size_t eq = rest.find('=');
  while (eq != std::string::npos && eq > 0 && rest[eq - 1] == '>') eq = rest.find('=', eq + 1);
  if (eq != std::string::npos) {
    type_text = absl::StripAsciiWhitespace(absl::string_view(rest).substr(0, eq));
    default_text = absl::StripAsciiWhitespace(absl::string_view(rest).substr(eq + 1));
  }
  if (absl::StartsWith(type_text, "{")) {
    // "{float, double}": a type restricted to a set.
    absl::string_view inner = type_text;
    absl::ConsumePrefix(&inner, "{");
    if (!absl::ConsumeSuffix(&inner, "}")) return SpecError(op, spec, "unclosed '{'");
    for (absl::string_view name : absl::StrSplit(inner, ',', absl::SkipWhitespace())) {
      auto t = DataTypeFromName(absl::StripAsciiWhitespace(name));
      if (!t.ok()) return SpecError(op, spec, t.status().message());
      attr.allowed_types.push_back(*t);
    }
    attr.type = "type";
  } else {
    size_t ge = type_text.find(">=");
    if (ge != absl::string_view::npos) {
      attr.has_minimum = true;
      if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(type_text.substr(ge + 2)), &attr.minimum)) {
        return SpecError(op, spec, "bad minimum");
      }
      type_text = absl::StripAsciiWhitespace(type_text.substr(0, ge));
    }
    attr.type = std::string(type_text);
  }
  static const char* kTypes[] = {"int", "float", "bool", "type", "shape", "tensor",
                                 "string", "func"};
  std::string base = attr.type;
  if (absl::StartsWith(base, "list(") && absl::EndsWith(base, ")")) {
    base = base.substr(5, base.size() - 6);
  }
  bool known = false;
  for (const char* t : kTypes) known = known || base == t;
  if (!known) return SpecError(op, spec, absl::StrCat("unknown attr type '", attr.type, "'"));
  if (!default_text.empty()) {
    auto value = ParseDefault(op, spec, attr.type, default_text);
    if (!value.ok()) return value.status();
    attr.has_default = true;
    attr.default_value = *std::move(value);
  }
  return attr;
}

absl::StatusOr<ArgSpec> ParseArg(absl::string_view op, absl::string_view spec,
                                 const std::vector<AttrSpec>& attrs) {
  ArgSpec arg;
  std::string rest;
  absl::Status s = SplitSpec(op, spec, &arg.name, &rest);
  if (!s.ok()) return s;
  absl::string_view type_text = rest;
  if (absl::ConsumePrefix(&type_text, "Ref(")) {
    if (!absl::ConsumeSuffix(&type_text, ")")) return SpecError(op, spec, "unclosed Ref(");
    arg.is_ref = true;
  }
  size_t star = type_text.find('*');
  if (star != absl::string_view::npos) {
    arg.number_attr = std::string(absl::StripAsciiWhitespace(type_text.substr(0, star)));
    type_text = absl::StripAsciiWhitespace(type_text.substr(star + 1));
  }
  auto fixed = DataTypeFromName(type_text);
  if (fixed.ok()) {
    arg.fixed_type = *fixed;
    return arg;
  }
  for (const AttrSpec& attr : attrs) {
    if (attr.name != type_text) continue;
    if (attr.type == "type") {
      arg.type_attr = attr.name;
    } else if (attr.type == "list(type)") {
      arg.type_list_attr = attr.name;
    } else {
      return SpecError(op, spec, "type attr must be 'type' or 'list(type)'");
    }
    return arg;
  }
  return SpecError(op, spec, absl::StrCat("no attr named '", type_text, "'"));
}

}  // namespace

const AttrSpec* OpDef::FindAttr(absl::string_view attr_name) const {
  for (const AttrSpec& attr : attrs) {
    if (attr.name == attr_name) return &attr;
  }
  return nullptr;
}

OpDefBuilder::OpDefBuilder(std::string name) : name_(std::move(name)) {}
OpDefBuilder& OpDefBuilder::Input(std::string spec) { inputs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::Output(std::string spec) { outputs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::Attr(std::string spec) { attrs_.push_back(std::move(spec)); return *this; }
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) { shape_fn_ = std::move(fn); return *this; }
OpDefBuilder& OpDefBuilder::SetIsStateful() { stateful_ = true; return *this; }
OpDefBuilder& OpDefBuilder::SetIsConstant() { constant_ = true; return *this; }
OpDefBuilder& OpDefBuilder::SetForwardsInputs() { forwards_ = true; return *this; }
OpDefBuilder& OpDefBuilder::SetOutputIsView() { view_ = true; return *this; }
OpDefBuilder& OpDefBuilder::SetOutputsFromShapes() { from_shapes_ = true; return *this; }

absl::StatusOr<OpDef> OpDefBuilder::Build() const {
  OpDef def;
  def.name = name_;
  def.shape_fn = shape_fn_;
  def.is_stateful = stateful_;
  def.is_constant = constant_;
  def.forwards_inputs = forwards_;
  def.output_is_view = view_;
  def.outputs_from_shapes = from_shapes_;
  for (const std::string& spec : attrs_) {
    auto attr = ParseAttr(name_, spec);
    if (!attr.ok()) return attr.status();
    def.attrs.push_back(*std::move(attr));
  }
  for (const std::string& spec : inputs_) {
    auto arg = ParseArg(name_, spec, def.attrs);
    if (!arg.ok()) return arg.status();
    def.inputs.push_back(*std::move(arg));
  }
  for (const std::string& spec : outputs_) {
    auto arg = ParseArg(name_, spec, def.attrs);
    if (!arg.ok()) return arg.status();
    def.outputs.push_back(*std::move(arg));
  }
  return def;
}

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

absl::Status OpRegistry::Register(OpDef def) {
  std::string name = def.name;
  if (ops_.count(name)) {
    return absl::AlreadyExistsError(absl::StrCat("op ", name, " is already registered"));
  }
  ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
  return absl::OkStatus();
}

const OpDef* OpRegistry::Find(absl::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<std::string> OpRegistry::ListOps() const {
  std::vector<std::string> names;
  for (const auto& entry : ops_) names.push_back(entry.first);
  return names;
}

OpRegistration::OpRegistration(const OpDefBuilder& builder) {
  auto def = builder.Build();
  absl::Status status = def.ok() ? OpRegistry::Global().Register(*std::move(def))
                                 : def.status();
  if (!status.ok()) {
    std::fprintf(stderr, "plexus: invalid op registration: %s\n",
                 std::string(status.message()).c_str());
    std::abort();
  }
}

}  // namespace plexus
