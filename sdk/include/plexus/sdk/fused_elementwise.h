// The program of _PlexusFusedElementwise, the op the graph optimizer makes
// from a tree of elementwise nodes (core/src/passes/optimizer/elementwise_fusion.cc).
// Shared by every plugin that implements it, so they all read and refuse
// programs alike.
//
// Attributes: T (float or double), N (the number of inputs), shape (the
// output shape), program (a list of instructions, one string each):
//   "OP A"    a unary op on operand A
//   "OP A B"  a binary op on operands A and B
// An operand is "iK" (input K), "rJ" (the result of instruction J < this
// one) or "cV" (the constant V, an immediate: any number strtod reads, e.g.
// "c0.5", "c-0x1.8p+1", "cinf", "cnan"; the optimizer writes C99 hex floats
// so the value is exact). A constant is converted to T and repeated. The
// last instruction's result is the output. An input has either the output's
// number of elements (read elementwise) or one element (repeated).
//
// Unary ops: Neg, Abs, Exp, Log, Sqrt, Rsqrt, Square, Reciprocal, Tanh,
// Sigmoid, Relu, Relu6. Binary ops: Add, AddV2, Sub, Mul, Div, RealDiv,
// Maximum, Minimum, SquaredDifference. Each computes what the op of that
// name computes.
#ifndef PLEXUS_SDK_FUSED_ELEMENTWISE_H_
#define PLEXUS_SDK_FUSED_ELEMENTWISE_H_

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/sdk/kernel.h"

namespace plexus::sdk {

struct FusedOperand {
  enum Kind { kInput, kResult, kConstant };
  Kind kind = kInput;
  int index = 0;       // of the input (kInput) or the instruction (kResult)
  double value = 0;    // kConstant
};

struct FusedInstruction {
  std::string op;
  int arity = 1;
  FusedOperand a, b;
};

inline bool IsFusedUnaryOp(const std::string& op) {
  static const char* const kOps[] = {"Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt",
                                     "Square", "Reciprocal", "Tanh", "Sigmoid", "Relu", "Relu6"};
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

inline bool IsFusedBinaryOp(const std::string& op) {
  static const char* const kOps[] = {"Add", "AddV2", "Sub", "Mul", "Div", "RealDiv",
                                     "Maximum", "Minimum", "SquaredDifference"};
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

// The number of elements of the op's `shape` attribute; throws sdk::Error
// (INVALID_ARGUMENT) for a negative dimension or a count that overflows
// int64, which only a hand-made node can hold.
inline int64_t FusedShapeElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d != 0 && n > INT64_MAX / d)) {
      throw Error(PX_CODE_INVALID_ARGUMENT,
                  "_PlexusFusedElementwise: attr 'shape' " + ShapeString(shape) +
                      (d < 0 ? " has a negative dimension" : " has more elements than int64 holds"));
    }
    n *= d;
  }
  return n;
}

// Parses and checks a program against `num_inputs`; throws sdk::Error
// (INVALID_ARGUMENT or UNIMPLEMENTED) naming the instruction.
inline std::vector<FusedInstruction> ParseFusedProgram(const std::vector<std::string>& program,
                                                       int64_t num_inputs) {
  PX_SDK_CHECK(!program.empty(), "_PlexusFusedElementwise: the program is empty");
  std::vector<FusedInstruction> out;
  for (size_t j = 0; j < program.size(); ++j) {
    std::vector<std::string> words;
    std::string word;
    for (char c : program[j]) {
      if (c == ' ') {
        if (!word.empty()) words.push_back(word);
        word.clear();
      } else {
        word += c;
      }
    }
    if (!word.empty()) words.push_back(word);
    PX_SDK_CHECK(!words.empty(), "_PlexusFusedElementwise: instruction %zu is empty", j);
    FusedInstruction ins;
    ins.op = words[0];
    if (IsFusedUnaryOp(ins.op)) {
      ins.arity = 1;
    } else if (IsFusedBinaryOp(ins.op)) {
      ins.arity = 2;
    } else {
      throw Error(PX_CODE_UNIMPLEMENTED,
                  Format("_PlexusFusedElementwise: instruction %zu: op '%s' cannot be fused", j, ins.op.c_str()));
    }
    PX_SDK_CHECK(static_cast<int>(words.size()) == 1 + ins.arity,
                 "_PlexusFusedElementwise: instruction %zu ('%s') needs %d operand(s)", j, program[j].c_str(),
                 ins.arity);
    for (int k = 0; k < ins.arity; ++k) {
      const std::string& w = words[1 + k];
      FusedOperand& operand = k == 0 ? ins.a : ins.b;
      PX_SDK_CHECK(w.size() >= 2 && (w[0] == 'i' || w[0] == 'r' || w[0] == 'c'),
                   "_PlexusFusedElementwise: instruction %zu: bad operand '%s'", j, w.c_str());
      char* end = nullptr;
      if (w[0] == 'c') {
        const double v = std::strtod(w.c_str() + 1, &end);
        PX_SDK_CHECK(end != nullptr && *end == '\0',
                     "_PlexusFusedElementwise: instruction %zu: bad constant '%s'", j, w.c_str());
        operand.kind = FusedOperand::kConstant;
        operand.value = v;
        continue;
      }
      long value = std::strtol(w.c_str() + 1, &end, 10);
      PX_SDK_CHECK(end != nullptr && *end == '\0' && value >= 0,
                   "_PlexusFusedElementwise: instruction %zu: bad operand '%s'", j, w.c_str());
      operand.kind = w[0] == 'i' ? FusedOperand::kInput : FusedOperand::kResult;
      operand.index = static_cast<int>(value);
      PX_SDK_CHECK(operand.kind == FusedOperand::kInput ? value < num_inputs : value < static_cast<long>(j),
                   "_PlexusFusedElementwise: instruction %zu: operand '%s' refers to nothing before it", j,
                   w.c_str());
    }
    out.push_back(ins);
  }
  return out;
}

}  // namespace plexus::sdk

#endif  // PLEXUS_SDK_FUSED_ELEMENTWISE_H_
