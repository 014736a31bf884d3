#include "plexus/tensor_proto.h"

#include <cstring>

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace plexus {
namespace {

tf::TensorProto Parse(const std::string& text) {
  tf::TensorProto proto;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &proto)) << text;
  return proto;
}

TEST(TensorProto, ShortValueListRepeatsItsLastElement) {
  // As in while_loop_v1.pbtxt: shape [2,2] with a single float_val.
  auto t = TensorFromProto(Parse(
      "dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1.0"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t->data<float>()[i], 1.0f);

  t = TensorFromProto(Parse(
      "dtype: DT_INT32 tensor_shape { dim { size: 4 } } int_val: 7 int_val: 9"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<int32_t>()[0], 7);
  EXPECT_EQ(t->data<int32_t>()[1], 9);
  EXPECT_EQ(t->data<int32_t>()[3], 9);
}

TEST(TensorProto, EmptyValueListMeansZeros) {
  auto t = TensorFromProto(Parse("dtype: DT_DOUBLE tensor_shape { dim { size: 3 } }"));
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t->data<double>()[i], 0.0);
}

TEST(TensorProto, TensorContentIsTheRawBuffer) {
  tf::TensorProto proto = Parse("dtype: DT_FLOAT tensor_shape { dim { size: 2 } }");
  float values[2] = {0.5f, -2.0f};
  proto.set_tensor_content(std::string(reinterpret_cast<char*>(values), sizeof(values)));
  auto t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<float>()[1], -2.0f);
  proto.set_tensor_content("abc");
  auto bad = TensorFromProto(proto);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("tensor_content has 3 bytes"), absl::string_view::npos);
}

TEST(TensorProto, ScalarsAndStringsAndErrors) {
  auto scalar = TensorFromProto(Parse("dtype: DT_INT64 int64_val: 42"));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->dims(), 0);
  EXPECT_EQ(scalar->data<int64_t>()[0], 42);

  auto strings = TensorFromProto(Parse(
      "dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: 'a' string_val: 'bc'"));
  ASSERT_TRUE(strings.ok());
  EXPECT_EQ(strings->strings()[1], "bc");

  EXPECT_FALSE(TensorFromProto(Parse("dtype: DT_FLOAT tensor_shape { dim { size: -1 } }")).ok());
  EXPECT_FALSE(TensorFromProto(Parse(
      "dtype: DT_FLOAT tensor_shape { dim { size: 1 } } float_val: 1 float_val: 2")).ok());
  tf::TensorProto unknown;
  unknown.set_dtype(static_cast<tf::DataType>(77));
  auto bad = TensorFromProto(unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown dtype 77"), absl::string_view::npos);
}

}  // namespace
}  // namespace plexus
