// The SDK's op-signature table (plexus/sdk/op_signatures.h) against the
// core's op definitions: every op exists, every type attribute is a type
// attribute of the op, every host-memory index names an argument; and the
// RegisterKernel overload that takes a signature fills the kernel def from
// it and refuses a wrong number of dtype lists.
#include "plexus/sdk/op_signatures.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plexus/op_def.h"

namespace {

namespace sdk = plexus::sdk;
using plexus::ArgSpec;
using plexus::AttrSpec;
using plexus::OpDef;
using plexus::OpRegistry;

// True when `index` can name one of `args`: below the count of fixed
// arguments, or anywhere from the first argument whose size depends on an
// attribute (N * T, a type list), which the table cannot bound.
bool IndexNamesArg(const std::vector<ArgSpec>& args, int32_t index) {
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].number_attr.empty() || !args[k].type_list_attr.empty()) return true;
    if (static_cast<int32_t>(k) == index) return true;
  }
  return false;
}

template <typename List>
void ExpectIndicesValid(const OpDef& def, const List& indices, bool input) {
  const char* what = input ? "input" : "output";
  std::set<int32_t> seen;
  for (int32_t i : indices) {
    EXPECT_GE(i, 0) << def.name << ": negative host-memory " << what;
    EXPECT_TRUE(seen.insert(i).second)
        << def.name << ": host-memory " << what << " " << i << " listed twice";
    EXPECT_TRUE(IndexNamesArg(input ? def.inputs : def.outputs, i))
        << def.name << ": host-memory " << what << " " << i << " is past the op's "
        << (input ? def.inputs.size() : def.outputs.size()) << " " << what << "s";
  }
}

TEST(OpSignatures, EveryOpIsDefinedByTheCore) {
  std::set<std::string> names;
  for (const sdk::OpSignature* sig : sdk::AllOpSignatures()) {
    ASSERT_NE(sig->op, nullptr);
    EXPECT_TRUE(names.insert(sig->op).second) << sig->op << " is in the table twice";
    EXPECT_NE(OpRegistry::Global().Find(sig->op), nullptr)
        << sig->op << " is in the op-signature table but the core defines no such op";
  }
  EXPECT_GT(names.size(), 100u);
}

TEST(OpSignatures, TypeAttributesAreTypeAttributesOfTheOp) {
  for (const sdk::OpSignature* sig : sdk::AllOpSignatures()) {
    const OpDef* def = OpRegistry::Global().Find(sig->op);
    if (def == nullptr) continue;  // reported above
    std::set<std::string> seen;
    for (const char* attr : sig->type_attrs) {
      EXPECT_TRUE(seen.insert(attr).second)
          << sig->op << ": type attribute " << attr << " listed twice";
      const AttrSpec* spec = def->FindAttr(attr);
      ASSERT_NE(spec, nullptr) << sig->op << " has no attribute " << attr;
      EXPECT_TRUE(spec->type == "type" || spec->type == "list(type)")
          << sig->op << ": attribute " << attr << " is " << spec->type << ", not a type";
    }
  }
}

TEST(OpSignatures, HostMemoryIndicesNameArguments) {
  for (const sdk::OpSignature* sig : sdk::AllOpSignatures()) {
    const OpDef* def = OpRegistry::Global().Find(sig->op);
    if (def == nullptr) continue;
    ExpectIndicesValid(*def, sig->host_inputs, true);
    ExpectIndicesValid(*def, sig->host_outputs, false);
  }
}

TEST(OpSignatures, FindAndOverride) {
  const sdk::OpSignature* reshape = sdk::FindOpSignature("Reshape");
  ASSERT_EQ(reshape, &sdk::sig::kReshape);
  EXPECT_STREQ(reshape->type_attrs[1], "Tshape");
  EXPECT_TRUE(reshape->host_inputs.contains(1));
  EXPECT_EQ(sdk::FindOpSignature("NoSuchOp"), nullptr);
  EXPECT_EQ(sdk::FindOpSignature("_FusedMatMul"), &sdk::sig::kFusedMatMul);
  constexpr sdk::OpSignature kPad = sdk::sig::kPadV2.WithHostInputs({1, 2});
  static_assert(kPad.host_inputs.size() == 2, "the override replaces the host inputs");
  EXPECT_EQ(sdk::sig::kPadV2.host_inputs.size(), 1u);
  EXPECT_EQ(sdk::sig::kShapeN.host_outputs.size(), static_cast<size_t>(sdk::kShapeNHostOutputs));
}

// A host that records the one kernel def it is given.
struct Recorded {
  std::string op;
  std::vector<std::string> attrs;
  std::vector<std::vector<PX_DataType>> types;
  std::vector<int32_t> host_inputs, host_outputs;
  int32_t priority = 0;
};
Recorded g_recorded;

struct FakeStatus {
  PX_Code code;
  std::string message;
};

PX_Status* StatusCreate(PX_Code code, const char* message) {
  return reinterpret_cast<PX_Status*>(new FakeStatus{code, message});
}
void StatusDestroy(PX_Status* s) { delete reinterpret_cast<FakeStatus*>(s); }
PX_Code StatusCode(const PX_Status* s) { return reinterpret_cast<const FakeStatus*>(s)->code; }
const char* StatusMessage(const PX_Status* s) {
  return reinterpret_cast<const FakeStatus*>(s)->message.c_str();
}
PX_Status* KernelRegister(PX_KernelRegistrar*, const PX_KernelDef* def) {
  g_recorded = Recorded{};
  g_recorded.op = def->op_name;
  for (size_t i = 0; i < def->num_type_constraints; ++i) {
    const PX_TypeConstraint& c = def->type_constraints[i];
    g_recorded.attrs.push_back(c.attr_name);
    g_recorded.types.emplace_back(c.allowed, c.allowed + c.num_allowed);
  }
  g_recorded.host_inputs.assign(def->host_memory_inputs,
                                def->host_memory_inputs + def->num_host_memory_inputs);
  g_recorded.host_outputs.assign(def->host_memory_outputs,
                                 def->host_memory_outputs + def->num_host_memory_outputs);
  g_recorded.priority = def->priority;
  return nullptr;
}

class NoKernel : public sdk::OpKernel {
 public:
  void Compute(sdk::Call&) override {}
};

class RegisterFromSignature : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.struct_size = sizeof(host_);
    host_.status_create = StatusCreate;
    host_.status_destroy = StatusDestroy;
    host_.status_code = StatusCode;
    host_.status_message = StatusMessage;
    host_.kernel_register = KernelRegister;
    info_.host = &host_;
    info_.plugin_name = "test";
  }
  PX_HostServices host_{};
  sdk::RegistrationInfo info_;
};

TEST_F(RegisterFromSignature, FillsTheDefFromTheTable) {
  const std::vector<PX_DataType> index = {PX_DT_INT32, PX_DT_INT64};
  ASSERT_EQ(
      sdk::RegisterKernel<NoKernel>(&info_, nullptr, sdk::sig::kReshape, {{PX_DT_FLOAT}, index}, 3),
      nullptr);
  EXPECT_EQ(g_recorded.op, "Reshape");
  EXPECT_EQ(g_recorded.attrs, (std::vector<std::string>{"T", "Tshape"}));
  EXPECT_EQ(g_recorded.types[0], std::vector<PX_DataType>{PX_DT_FLOAT});
  EXPECT_EQ(g_recorded.types[1], index);
  EXPECT_EQ(g_recorded.host_inputs, std::vector<int32_t>{1});
  EXPECT_TRUE(g_recorded.host_outputs.empty());
  EXPECT_EQ(g_recorded.priority, 3);

  ASSERT_EQ(
      sdk::RegisterKernel<NoKernel>(&info_, nullptr, sdk::sig::kShape, {{PX_DT_FLOAT}, index}),
      nullptr);
  EXPECT_EQ(g_recorded.host_outputs, std::vector<int32_t>{0});
  ASSERT_EQ(sdk::RegisterKernel<NoKernel>(&info_, nullptr, sdk::sig::kNoOp), nullptr);
  EXPECT_TRUE(g_recorded.attrs.empty());
}

TEST_F(RegisterFromSignature, RefusesAWrongNumberOfDtypeLists) {
  g_recorded = Recorded{};
  PX_Status* s =
      sdk::RegisterKernel<NoKernel>(&info_, nullptr, sdk::sig::kReshape, {{PX_DT_FLOAT}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(StatusCode(s), PX_CODE_INVALID_ARGUMENT);
  std::string message = StatusMessage(s);
  EXPECT_NE(message.find("Reshape"), std::string::npos) << message;
  EXPECT_NE(message.find("(T, Tshape)"), std::string::npos) << message;
  EXPECT_NE(message.find("1 dtype lists"), std::string::npos) << message;
  StatusDestroy(s);
  EXPECT_TRUE(g_recorded.op.empty()) << "nothing is registered";
}

TEST_F(RegisterFromSignature, StringOverloadStillWorks) {
  ASSERT_EQ(sdk::RegisterKernel<NoKernel>(&info_, nullptr, "Reshape",
                                          {{"T", {PX_DT_FLOAT}}, {"Tshape", {PX_DT_INT32}}}, {1}),
            nullptr);
  EXPECT_EQ(g_recorded.attrs, (std::vector<std::string>{"T", "Tshape"}));
  EXPECT_EQ(g_recorded.host_inputs, std::vector<int32_t>{1});
}

}  // namespace
