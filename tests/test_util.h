// Shared helpers for the C++ tests.
#ifndef PLEXUS_TESTS_TEST_UTIL_H_
#define PLEXUS_TESTS_TEST_UTIL_H_

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "plexus/plexus.h"

namespace plexus::testing {

// A runtime with only the cpu plugin (no discovery), failing the test if the
// plugin does not load.
std::unique_ptr<Runtime> CpuRuntime();
// A runtime with the cpu and reference plugins only (CPU:0 and REF:0).
std::unique_ptr<Runtime> CpuAndReferenceRuntime();
// A runtime with the cpu plugin and a test plugin of tests/broken_plugins.
std::unique_ptr<Runtime> CpuAndTestPluginRuntime(const std::string& flavour);

// Imports a text GraphDef written inline in a test.
std::shared_ptr<const Graph> GraphFromText(const std::string& text);

// True when the status message contains `text`.
bool Contains(const absl::Status& status, absl::string_view text);

// tests/data/<relative>
std::string DataPath(const std::string& relative);

// A test plugin built from tests/broken_plugins (e.g. "good", "wrong_major").
std::string TestPluginPath(const std::string& flavour);

}  // namespace plexus::testing

#define PX_ASSERT_OK(expr)                                   \
  do {                                                       \
    auto px_s_ = (expr);                                     \
    ASSERT_TRUE(px_s_.ok()) << px_s_;                        \
  } while (0)

#define PX_ASSERT_OK_AND_ASSIGN(lhs, expr)                   \
  PX_ASSERT_OK_AND_ASSIGN_IMPL_(PX_CONCAT_(px_sor_, __LINE__), lhs, expr)
#define PX_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr)        \
  auto tmp = (expr);                                         \
  ASSERT_TRUE(tmp.ok()) << tmp.status();                     \
  lhs = std::move(tmp).value()

#endif  // PLEXUS_TESTS_TEST_UTIL_H_
