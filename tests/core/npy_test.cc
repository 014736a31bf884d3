#include "plexus/npy.h"

#include <cstdio>

#include "gtest/gtest.h"
#include "test_util.h"

namespace plexus {
namespace {

TEST(Npy, ReadsNumPyFiles) {
  auto t = ReadNpy(testing::DataPath("tf_graphs/mlp_fc_layers/ref_input_ramp.npy"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DataType::kFloat);
  EXPECT_EQ(t->shape(), (Shape{1, 784}));
  EXPECT_FLOAT_EQ(t->data<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(t->data<float>()[783], 784.0f);
}

TEST(Npy, RoundTrips) {
  Tensor t = Tensor::FromVector<int32_t>(DataType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string path = ::testing::TempDir() + "/plexus_npy_roundtrip.npy";
  PX_ASSERT_OK(WriteNpy(path, t));
  auto back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), t.shape());
  EXPECT_EQ(back->data<int32_t>()[5], 6);
  Tensor scalar = Tensor::FromVector<double>(DataType::kDouble, {}, {2.5});
  PX_ASSERT_OK(WriteNpy(path, scalar));
  back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->dims(), 0);
  EXPECT_EQ(back->data<double>()[0], 2.5);
  std::remove(path.c_str());
}

TEST(Npy, RejectsBadFilesWithTheirName) {
  auto missing = ReadNpy("/nonexistent/x.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/x.npy"), absl::string_view::npos);
  auto garbage = ParseNpy("not an npy file at all", "garbage.npy");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("garbage.npy"), absl::string_view::npos);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  std::string truncated = std::string("\x93NUMPY\x01\x00", 8) +
                          std::string(1, static_cast<char>(header.size())) + std::string(1, '\0') +
                          header + "abc";
  auto short_data = ParseNpy(truncated, "short.npy");
  ASSERT_FALSE(short_data.ok());
  EXPECT_NE(short_data.status().message().find("needs 16"), absl::string_view::npos);
}

// A .npy file as NumPy writes it: the v1 header, then the data.
std::string NpyBytes(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  return std::string("\x93NUMPY\x01\x00", 8) + std::string(1, static_cast<char>(header.size())) +
         std::string(1, '\0') + header + data;
}

TEST(Npy, ReadsAndWritesStrings) {
  // NumPy's bytes ('S3': NUL-padded, trailing NULs stripped) ...
  auto bytes = ParseNpy(NpyBytes("|S3", "(2,)", std::string("ab\0xyz", 6)), "s.npy");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  ASSERT_EQ(bytes->dtype(), DataType::kString);
  EXPECT_EQ(bytes->strings(), (std::vector<std::string>{"ab", "xyz"}));
  // ... and Unicode ('U2': UTF-32 code points, written here as UTF-8).
  std::string utf32;
  for (uint32_t c : {0x68u, 0xE9u, 0x20ACu, 0u}) utf32.append(reinterpret_cast<const char*>(&c), 4);
  auto text = ParseNpy(NpyBytes("<U2", "(2,)", utf32), "u.npy");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->strings(), (std::vector<std::string>{"h\xC3\xA9", "\xE2\x82\xAC"}));
  auto short_strings = ParseNpy(NpyBytes("|S3", "(2,)", "abc"), "short.npy");
  ASSERT_FALSE(short_strings.ok());
  EXPECT_NE(short_strings.status().message().find("short.npy"), absl::string_view::npos);

  // Written as '|S<longest>' and read back the same.
  Tensor t = Tensor::FromStrings({2, 2}, {"a", "", "hello", "wav\x01"});
  std::string path = ::testing::TempDir() + "/plexus_npy_strings.npy";
  PX_ASSERT_OK(WriteNpy(path, t));
  auto back = ReadNpy(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
  EXPECT_EQ(back->strings(), t.strings());
  std::remove(path.c_str());
}

// fuzz_npy (issue 27): a 145-byte file whose header claims 999999999
// int64 values made ParseNpy allocate 8 GB before comparing the claim with
// the bytes there are; zero-width strings could ask for billions of
// std::strings. Both are errors now, before any allocation.
TEST(Npy, ClaimedSizesAreCheckedBeforeAllocating) {
  auto huge = ReadNpy(testing::DataPath("../fuzz/regressions/npy_claims_8_gb.npy"));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("npy_claims_8_gb.npy"), absl::string_view::npos) << huge.status();
  EXPECT_NE(huge.status().message().find("needs 7999999992"), absl::string_view::npos) << huge.status();
  auto overflow = ParseNpy(NpyBytes("<f4", "(2305843009213693952, 2)", ""), "overflow.npy");
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("needs more than 2^64"), absl::string_view::npos)
      << overflow.status();
  auto empty_strings = ParseNpy(NpyBytes("|S0", "(1000000000,)", ""), "empty.npy");
  ASSERT_FALSE(empty_strings.ok());
  EXPECT_NE(empty_strings.status().message().find("at most"), absl::string_view::npos)
      << empty_strings.status();
}

}  // namespace
}  // namespace plexus
