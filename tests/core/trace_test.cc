// The trace writer's JSON: names pass through when they are well-formed
// UTF-8 and are escaped otherwise, so the file always parses.
#include "gtest/gtest.h"
#include "../../core/src/base/trace.h"

namespace plexus {
namespace {

TEST(Trace, JsonEscapesWhatIsNotWellFormedUtf8) {
  TraceRecorder trace;
  for (const char* name : {"plain", "caf\xc3\xa9", "bad\xff\xfe", "ctl\x01", "quote\"back\\",
                           "surrogate\xed\xa0\x80", "cut\xe2\x82", "four\xf0\x9f\x99\x82"}) {
    trace.Add({name, "Op", "CPU:0", 0, 1, 1});
  }
  const std::string json = trace.Json();
  EXPECT_NE(json.find("\"plain\""), std::string::npos);
  EXPECT_NE(json.find("\"caf\xc3\xa9\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"bad\\u00ff\\u00fe\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"ctl\\u0001\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"quote\\\"back\\\\\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"surrogate\\u00ed\\u00a0\\u0080\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"cut\\u00e2\\u0082\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"four\xf0\x9f\x99\x82\""), std::string::npos) << json;
  for (unsigned char c : json) EXPECT_TRUE(c >= 0x20 || c == '\n') << "raw control byte " << int(c);
}

}  // namespace
}  // namespace plexus
