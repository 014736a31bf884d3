#include "plexus/dtype.h"

#include "gtest/gtest.h"
#include "plexus/plugin_api.h"
#include "plexus/shape.h"

namespace plexus {
namespace {

TEST(DataType, UsesTensorFlowNumbers) {
  EXPECT_EQ(static_cast<int>(DataType::kFloat), 1);
  EXPECT_EQ(static_cast<int>(DataType::kInt32), 3);
  EXPECT_EQ(static_cast<int>(DataType::kInt64), 9);
  EXPECT_EQ(static_cast<int>(DataType::kBool), 10);
  EXPECT_EQ(static_cast<int>(DataType::kHalf), 19);
  EXPECT_EQ(static_cast<int>(DataType::kUInt64), 23);
  // The ABI uses the same numbers.
  EXPECT_EQ(static_cast<int>(DataType::kDouble), PX_DT_DOUBLE);
  EXPECT_EQ(static_cast<int>(DataType::kBFloat16), PX_DT_BFLOAT16);
}

TEST(DataType, SizesAndNames) {
  EXPECT_EQ(DataTypeSize(DataType::kFloat), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kComplex128), 16u);
  EXPECT_EQ(DataTypeSize(DataType::kString), 0u);
  EXPECT_EQ(DataTypeName(DataType::kInt32), "int32");
  EXPECT_EQ(*DataTypeFromName("DT_FLOAT"), DataType::kFloat);
  EXPECT_EQ(*DataTypeFromName("float64"), DataType::kDouble);
  EXPECT_FALSE(DataTypeFromName("float7").ok());
}

TEST(DataType, RefTypesStripToTheirBase) {
  EXPECT_TRUE(IsKnownDataType(101));
  EXPECT_EQ(BaseType(101), DataType::kFloat);
  EXPECT_FALSE(IsKnownDataType(99));
}

TEST(DataType, DLPackRoundTrip) {
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64,
                     DataType::kUInt8, DataType::kInt8, DataType::kBool, DataType::kHalf,
                     DataType::kBFloat16, DataType::kComplex64}) {
    auto dl = ToDLDataType(t);
    ASSERT_TRUE(dl.ok()) << DataTypeName(t);
    EXPECT_EQ(*FromDLDataType(*dl), t);
  }
  EXPECT_FALSE(ToDLDataType(DataType::kString).ok());
  DLDataType vector{kDLFloat, 32, 4};
  EXPECT_FALSE(FromDLDataType(vector).ok());
}

TEST(Shape, Broadcasting) {
  auto s = BroadcastShapes(PartialShape({2, 1, 3}), PartialShape({4, 1}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dims(), (Shape{2, 4, 3}));
  s = BroadcastShapes(PartialShape({-1, 3}), PartialShape({3}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ToString(), "[?,3]");
  EXPECT_FALSE(BroadcastShapes(PartialShape::Unknown(), PartialShape({3}))->rank_known());
  auto bad = BroadcastShapes(PartialShape({2, 3}), PartialShape({4}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Incompatible shapes: [2,3] vs. [4]");
}

}  // namespace
}  // namespace plexus
