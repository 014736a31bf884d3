// The CUDA plugin's fused elementwise code generator and NVRTC cache
// (plugins/cuda/src/fused/), without a GPU: every program is generated and
// compiled with NVRTC for sm_90, which works where no device or driver
// exists. The numbers the kernels compute are checked on a GPU by
// cuda_fused_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fused/fused_codegen.h"
#include "fused/fused_compiler.h"
#include "fused/nvrtc_loader.h"
#include "plexus/sdk/fused_elementwise.h"

namespace plexus::cuda {
namespace {

const PX_DataType kDtypes[] = {PX_DT_FLOAT, PX_DT_DOUBLE, PX_DT_HALF, PX_DT_BFLOAT16};

std::string Generate(const std::vector<std::string>& program, int64_t n, PX_DataType t) {
  return GenerateFusedSource(sdk::ParseFusedProgram(program, n), n, t);
}

// Compiles and checks the cache: a second request returns the same image
// and compiles nothing.
void ExpectCompiles(const std::string& source) {
  const int64_t before = FusedCompileCount();
  std::shared_ptr<const FusedImage> image;
  try {
    image = CompileFusedSource(source, kFusedDefaultComputeCapability);
  } catch (const std::exception& e) {
    FAIL() << e.what() << "\n" << source;
  }
  ASSERT_NE(image, nullptr);
  EXPECT_FALSE(image->data.empty());
  EXPECT_EQ(image->target, "sm_90");
  EXPECT_FALSE(image->ptx);
  // A CUBIN is an ELF file.
  ASSERT_GE(image->data.size(), 4u);
  EXPECT_EQ(std::memcmp(image->data.data(), "\x7f" "ELF", 4), 0);
  const int64_t after_first = FusedCompileCount();
  EXPECT_LE(after_first, before + 1) << "one source compiled more than once";
  auto again = CompileFusedSource(source, kFusedDefaultComputeCapability);
  EXPECT_EQ(again.get(), image.get());
  EXPECT_EQ(FusedCompileCount(), after_first) << "the second request compiled again";
}

void ExpectProgramCompiles(const std::vector<std::string>& program, int64_t n) {
  for (PX_DataType t : kDtypes) {
    SCOPED_TRACE(sdk::DtypeName(t));
    ExpectCompiles(Generate(program, n, t));
  }
}

TEST(CudaFusedCodegen, EveryUnaryOp) {
  std::vector<std::string> program;
  const char* ops[] = {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Reciprocal", "Tanh", "Sigmoid",
                       "Relu", "Relu6"};
  program.push_back(std::string(ops[0]) + " i0");
  for (size_t k = 1; k < sizeof(ops) / sizeof(ops[0]); ++k) {
    program.push_back(std::string(ops[k]) + " r" + std::to_string(k - 1));
  }
  ExpectProgramCompiles(program, 1);
}

TEST(CudaFusedCodegen, EveryBinaryOp) {
  ExpectProgramCompiles({"Add i0 i1", "AddV2 r0 i1", "Sub r1 i0", "Mul r2 i1", "Div r3 i0", "RealDiv r4 i1",
                         "Maximum r5 i0", "Minimum r6 i1", "SquaredDifference r7 i0"},
                        2);
}

TEST(CudaFusedCodegen, BroadcastInputsAndUnusedInput) {
  // Input 1 may be one element (stride 0) at run time; input 2 is never read.
  const std::string source = Generate({"Mul i0 i1", "Add r0 i1"}, 3, PX_DT_FLOAT);
  EXPECT_NE(source.find("long long s0, long long s1, long long s2"), std::string::npos) << source;
  EXPECT_NE(source.find("in1[e * s1]"), std::string::npos) << source;
  EXPECT_EQ(source.find("in2[e * s2]"), std::string::npos) << source;
  ExpectCompiles(source);
}

TEST(CudaFusedCodegen, ImmediatesAreExact) {
  // Hex floats as the optimizer writes them, and the special values.
  EXPECT_EQ(FusedConstantLiteral(1.5, PX_DT_FLOAT), "(0x1.8p+0f)");
  EXPECT_EQ(FusedConstantLiteral(-3.0, PX_DT_DOUBLE), "(-0x1.8p+1)");
  EXPECT_EQ(FusedConstantLiteral(0.1, PX_DT_DOUBLE), "(0x1.999999999999ap-4)");
  EXPECT_EQ(FusedConstantLiteral(0.1, PX_DT_FLOAT), "(0x1.99999ap-4f)");
  EXPECT_EQ(FusedConstantLiteral(-0.0, PX_DT_FLOAT), "(-0x0p+0f)");
  EXPECT_EQ(FusedConstantLiteral(std::numeric_limits<double>::infinity(), PX_DT_FLOAT), "__int_as_float(0x7f800000)");
  EXPECT_EQ(FusedConstantLiteral(-std::numeric_limits<double>::infinity(), PX_DT_DOUBLE),
            "__longlong_as_double(0xfff0000000000000LL)");
  EXPECT_EQ(FusedConstantLiteral(std::nan(""), PX_DT_FLOAT), "__int_as_float(0x7fc00000)");
  // Rounded to the dtype first: 0.1 in half is 0x1.998p-4, 70000 is inf.
  EXPECT_EQ(FusedConstantLiteral(0.1, PX_DT_HALF), "(0x1.998p-4f)");
  EXPECT_EQ(FusedConstantLiteral(70000, PX_DT_HALF), "__int_as_float(0x7f800000)");
  EXPECT_EQ(FusedConstantLiteral(0.1, PX_DT_BFLOAT16), "(0x1.9ap-4f)");
  // The smallest float subnormal and the largest double.
  EXPECT_EQ(FusedConstantLiteral(std::ldexp(1.0, -149), PX_DT_FLOAT), "(0x1p-149f)");
  EXPECT_EQ(FusedConstantLiteral(std::numeric_limits<double>::max(), PX_DT_DOUBLE), "(0x1.fffffffffffffp+1023)");

  ExpectProgramCompiles({"Add i0 c0x1.8p+1", "Mul r0 c-0x0p+0", "Maximum r1 cinf", "Minimum r2 c-inf",
                         "Add r3 cnan", "Sub c-0x1.999999999999ap-4 r4", "Div c1e-300 r5", "Mul r6 c4.9e-324"},
                        1);
}

TEST(CudaFusedCodegen, ConstantsOnly) { ExpectProgramCompiles({"Add c1 c2", "Exp r0"}, 1); }

TEST(CudaFusedCodegen, DeepChain) {
  // 300 instructions alternating ops, each reading the previous result.
  std::vector<std::string> program = {"Mul i0 i1"};
  const char* ops[] = {"Add r%d i0", "Mul r%d c0x1.0000000000001p+0", "Tanh r%d", "Sub i1 r%d",
                       "Maximum r%d i2", "Sigmoid r%d"};
  for (int j = 1; j < 300; ++j) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), ops[j % 6], j - 1);
    program.push_back(buf);
  }
  ExpectProgramCompiles(program, 3);
}

TEST(CudaFusedCodegen, WideTree) {
  // A balanced tree over 16 inputs: every result read once, late.
  std::vector<std::string> program;
  for (int i = 0; i < 16; i += 2) program.push_back("SquaredDifference i" + std::to_string(i) + " i" + std::to_string(i + 1));
  int level_start = 0, level_size = 8;
  while (level_size > 1) {
    for (int k = 0; k < level_size; k += 2) {
      program.push_back("Add r" + std::to_string(level_start + k) + " r" + std::to_string(level_start + k + 1));
    }
    level_start += level_size;
    level_size /= 2;
  }
  ExpectProgramCompiles(program, 16);
}

TEST(CudaFusedCodegen, SourceShape) {
  const std::string source = Generate({"Relu6 i0", "Sigmoid r0"}, 1, PX_DT_HALF);
  // One kernel, extern "C", no headers, the program one line an instruction.
  EXPECT_NE(source.find("extern \"C\" __global__ void px_fused(const px_t* in0, px_t* out, long long n, long long s0)"),
            std::string::npos)
      << source;
  EXPECT_EQ(source.find("#include"), std::string::npos) << source;
  EXPECT_NE(source.find("const px_c r0 = px_round(px_relu6(x0));  // [0] Relu6 i0\n"), std::string::npos) << source;
  EXPECT_NE(source.find("out[e] = px_store(r1);"), std::string::npos) << source;
  EXPECT_NE(source.find("typedef unsigned short px_t;"), std::string::npos) << source;
  EXPECT_NE(Generate({"Exp i0"}, 1, PX_DT_DOUBLE).find("exp(x0)"), std::string::npos);
  EXPECT_NE(Generate({"Exp i0"}, 1, PX_DT_FLOAT).find("expf(x0)"), std::string::npos);
}

TEST(CudaFusedCodegen, DistinctSourcesDistinctImagesSameSourceOneCompile) {
  const std::string a = Generate({"Add i0 c0x1.4p+3"}, 1, PX_DT_FLOAT);
  const std::string b = Generate({"Add i0 c0x1.6p+3"}, 1, PX_DT_FLOAT);
  ASSERT_NE(a, b);
  const int64_t before = FusedCompileCount();
  auto ia = CompileFusedSource(a, 90);
  auto ib = CompileFusedSource(b, 90);
  EXPECT_NE(ia.get(), ib.get());
  EXPECT_EQ(FusedCompileCount(), before + 2);
  EXPECT_EQ(CompileFusedSource(a, 90).get(), ia.get());
  EXPECT_EQ(CompileFusedSource(b, 90).get(), ib.get());
  EXPECT_EQ(FusedCompileCount(), before + 2);
  // Another architecture is another image.
  auto a80 = CompileFusedSource(a, 80);
  EXPECT_NE(a80.get(), ia.get());
  EXPECT_EQ(a80->target, "sm_80");
}

TEST(CudaFusedCodegen, UnknownArchitectureFallsBackToPtx) {
  // A capability newer than any this NVRTC knows: PTX for the newest it knows.
  auto image = CompileFusedSource(Generate({"Neg i0"}, 1, PX_DT_FLOAT), 990);
  EXPECT_TRUE(image->ptx);
  EXPECT_EQ(image->target.compare(0, 8, "compute_"), 0) << image->target;
  const std::string text(image->data.data());
  EXPECT_NE(text.find(".entry px_fused"), std::string::npos) << text.substr(0, 400);
}

TEST(CudaFusedCodegen, MalformedProgramsAreRefused) {
  auto expect_refused = [](const std::vector<std::string>& program, int64_t n, const std::string& text) {
    try {
      Generate(program, n, PX_DT_FLOAT);
      ADD_FAILURE() << "accepted: " << program.back();
    } catch (const sdk::Error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_refused({}, 1, "the program is empty");
  expect_refused({"Add i0"}, 1, "needs 2 operand(s)");
  expect_refused({"Neg i1"}, 1, "refers to nothing before it");
  expect_refused({"Neg r0"}, 1, "refers to nothing before it");
  expect_refused({"Erf i0"}, 1, "cannot be fused");
  expect_refused({"Neg c1.5x"}, 1, "bad constant");
  expect_refused({"Neg x0"}, 1, "bad operand");
  // An unsupported dtype.
  try {
    GenerateFusedSource(sdk::ParseFusedProgram({"Neg i0"}, 1), 1, PX_DT_INT32);
    ADD_FAILURE() << "int32 accepted";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("float, double, half or bfloat16"), std::string::npos) << e.what();
  }
  // A hand-built program the parser would refuse is refused by the generator too.
  sdk::FusedInstruction bad;
  bad.op = "Neg";
  bad.a.kind = sdk::FusedOperand::kResult;
  bad.a.index = 0;
  EXPECT_THROW(GenerateFusedSource({bad}, 1, PX_DT_FLOAT), sdk::Error);
}

TEST(CudaFusedCodegen, CompileErrorsCarryTheLogAndTheLine) {
  std::string source = Generate({"Neg i0"}, 1, PX_DT_FLOAT);
  source += "this is not C++;\n";
  try {
    CompileFusedSource(source, 90);
    FAIL() << "compiled";
  } catch (const sdk::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("NVRTC could not compile"), std::string::npos) << message;
    EXPECT_NE(message.find("px_fused.cu("), std::string::npos) << message;
    EXPECT_NE(message.find(": this is not C++;"), std::string::npos) << message;
  }
  // A failure is not cached as a success: the next request fails again.
  EXPECT_THROW(CompileFusedSource(source, 90), sdk::Error);
}

// NVRTC is opened at run time (fused/nvrtc_loader.h). Here it exists: the
// default names load it and every function resolves.
TEST(CudaNvrtcLoader, LoadsTheToolkitsNvrtc) {
  const std::vector<std::string> names = DefaultNvrtcLibraryNames();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front().rfind("libnvrtc.so.", 0), 0u) << names.front();  // the versioned soname first
  NvrtcApi api;
  EXPECT_EQ(LoadNvrtc(names, &api), "");
  EXPECT_NE(api.nvrtcCompileProgram, nullptr);
  EXPECT_NE(api.nvrtcGetCUBIN, nullptr);
  EXPECT_STREQ(Nvrtc().nvrtcGetErrorString(NVRTC_SUCCESS), "NVRTC_SUCCESS");
  EXPECT_STREQ(nvrtc::nvrtcGetErrorString(NVRTC_ERROR_INVALID_OPTION), "NVRTC_ERROR_INVALID_OPTION");
}

// A library that is not there: a message naming it, with dlopen's reason for
// every name tried and what to install; the table is left alone.
TEST(CudaNvrtcLoader, MissingLibraryIsReported) {
  NvrtcApi api;
  const std::string error = LoadNvrtc({"libplexus_no_such_nvrtc.so.13", "libplexus_no_such_nvrtc.so"}, &api);
  EXPECT_EQ(error.rfind("libplexus_no_such_nvrtc.so.13 not found (", 0), 0u) << error;
  EXPECT_NE(error.find("libplexus_no_such_nvrtc.so.13: cannot open shared object file"), std::string::npos) << error;
  EXPECT_NE(error.find("libplexus_no_such_nvrtc.so: cannot open shared object file"), std::string::npos) << error;
  const std::string hint = "): install the CUDA toolkit's NVRTC library";
  ASSERT_GE(error.size(), hint.size());
  EXPECT_EQ(error.substr(error.size() - hint.size()), hint) << error;
  EXPECT_EQ(api.nvrtcCreateProgram, nullptr);
}

// A library that exists but is not NVRTC: the first missing function is named.
TEST(CudaNvrtcLoader, MissingFunctionIsReported) {
  NvrtcApi api;
  const std::string error = LoadNvrtc({"libm.so.6"}, &api);
  EXPECT_EQ(error.rfind("libm.so.6 lacks nvrtcGetErrorString (", 0), 0u) << error;
  EXPECT_NE(error.find("install the CUDA toolkit's NVRTC library"), std::string::npos) << error;
  EXPECT_EQ(api.nvrtcGetErrorString, nullptr);
}

}  // namespace
}  // namespace plexus::cuda
