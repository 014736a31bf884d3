// The conformance report: one result per check (pass, fail, or skip with a
// reason) grouped by section, and the op x dtype coverage table of the
// kernel section. Printed for people or written as JSON.
#ifndef PLEXUS_SDK_CONFORMANCE_REPORT_H_
#define PLEXUS_SDK_CONFORMANCE_REPORT_H_

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace plexus::conformance {

enum class Outcome { kPass, kFail, kSkip };
const char* OutcomeName(Outcome o);  // "pass", "fail", "skip"

struct CheckResult {
  std::string section;  // "abi", "memory", "streams", "kernels", "robustness"
  std::string name;     // "negotiation.older_host"
  Outcome outcome = Outcome::kPass;
  std::string detail;   // what was checked, why it failed, or why it was skipped
};

// One cell of the coverage table.
struct CoverageCell {
  std::string op;
  std::string dtype;   // "float", ... or "-" for an op without a type attribute
  Outcome outcome = Outcome::kPass;
  int cases_run = 0;
  int cases_passed = 0;
  std::string detail;  // first failure, or the skip reason
};

class Report {
 public:
  void Add(CheckResult r);
  void Pass(const std::string& section, const std::string& name, const std::string& detail) {
    Add({section, name, Outcome::kPass, detail});
  }
  void Fail(const std::string& section, const std::string& name, const std::string& detail) {
    Add({section, name, Outcome::kFail, detail});
  }
  void Skip(const std::string& section, const std::string& name, const std::string& reason) {
    Add({section, name, Outcome::kSkip, reason});
  }
  void AddCell(CoverageCell c);

  // Facts about the plugin shown at the top ("name", "abi", "devices", ...).
  void SetInfo(const std::string& key, const std::string& value);

  // Crash isolation: the checks that touch devices run in a child process
  // whose report streams each result, and each check's start, as a line to
  // `fd`; the parent rebuilds the report with ParseLine and knows which check
  // was running if the child dies.
  void StreamTo(int fd) { stream_fd_ = fd; }
  void Begin(const std::string& section, const std::string& name);
  // Applies one streamed line; a "begin" line sets *section and *name.
  void ParseLine(const std::string& line, std::string* section, std::string* name);

  int failures() const;
  const std::vector<CheckResult>& checks() const { return checks_; }
  const std::vector<CoverageCell>& cells() const { return cells_; }

  void PrintHuman(std::FILE* out, bool verbose) const;
  std::string Json() const;

 private:
  void Emit(const std::vector<std::string>& fields) const;

  int stream_fd_ = -1;
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> info_;
  std::vector<CheckResult> checks_;
  std::vector<CoverageCell> cells_;
};

}  // namespace plexus::conformance

#endif  // PLEXUS_SDK_CONFORMANCE_REPORT_H_
