#include "report.h"

#include <algorithm>
#include <unistd.h>

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace plexus::conformance {
namespace {

const char* const kDtypeOrder[] = {"float", "double", "half",   "bfloat16", "int8",   "int16", "int32",
                                   "int64", "uint8",  "uint16", "uint32",   "uint64", "bool",  "-"};

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

int SectionRank(const std::string& section) {
  const char* const kOrder[] = {"abi", "memory", "streams", "kernels", "robustness"};
  for (int i = 0; i < 5; ++i) {
    if (section == kOrder[i]) return i;
  }
  return 5;
}

// Checks grouped by section in the report's order, otherwise as added.
std::vector<CheckResult> Ordered(const std::vector<CheckResult>& checks) {
  std::vector<CheckResult> out = checks;
  std::stable_sort(out.begin(), out.end(), [](const CheckResult& a, const CheckResult& b) {
    return SectionRank(a.section) < SectionRank(b.section);
  });
  return out;
}

int DtypeRank(const std::string& dtype) {
  for (size_t i = 0; i < sizeof(kDtypeOrder) / sizeof(kDtypeOrder[0]); ++i) {
    if (dtype == kDtypeOrder[i]) return static_cast<int>(i);
  }
  return 100;
}

// Fields of a streamed line are tab-separated; tabs, newlines and
// backslashes inside them are escaped.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string Unescape(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out += c == 't' ? '\t' : c == 'n' ? '\n' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

Outcome ParseOutcome(const std::string& s) {
  return s == "pass" ? Outcome::kPass : s == "skip" ? Outcome::kSkip : Outcome::kFail;
}

}  // namespace

void Report::Emit(const std::vector<std::string>& fields) const {
  if (stream_fd_ < 0) return;
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) line += '\t';
    line += Escape(fields[i]);
  }
  line += '\n';
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = write(stream_fd_, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void Report::Begin(const std::string& section, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  Emit({"B", section, name});
}

void Report::ParseLine(const std::string& line, std::string* section, std::string* name) {
  std::vector<std::string> f;
  for (absl::string_view part : absl::StrSplit(line, '\t')) f.push_back(Unescape(part));
  if (f.empty()) return;
  if (f[0] == "B" && f.size() == 3) {
    *section = f[1];
    *name = f[2];
  } else if (f[0] == "C" && f.size() == 5) {
    Add({f[1], f[2], ParseOutcome(f[3]), f[4]});
  } else if (f[0] == "K" && f.size() == 7) {
    CoverageCell c{f[1], f[2], ParseOutcome(f[3]), 0, 0, f[6]};
    (void)absl::SimpleAtoi(f[4], &c.cases_run);
    (void)absl::SimpleAtoi(f[5], &c.cases_passed);
    AddCell(std::move(c));
  } else if (f[0] == "I" && f.size() == 3) {
    SetInfo(f[1], f[2]);
  }
}

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kSkip: return "skip";
  }
  return "?";
}

void Report::Add(CheckResult r) {
  std::lock_guard<std::mutex> lock(mu_);
  Emit({"C", r.section, r.name, OutcomeName(r.outcome), r.detail});
  checks_.push_back(std::move(r));
}

void Report::AddCell(CoverageCell c) {
  std::lock_guard<std::mutex> lock(mu_);
  Emit({"K", c.op, c.dtype, OutcomeName(c.outcome), std::to_string(c.cases_run),
        std::to_string(c.cases_passed), c.detail});
  cells_.push_back(std::move(c));
}

void Report::SetInfo(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  Emit({"I", key, value});
  for (auto& entry : info_) {
    if (entry.first == key) {
      entry.second = value;
      return;
    }
  }
  info_.emplace_back(key, value);
}

int Report::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const CheckResult& c : checks_) n += c.outcome == Outcome::kFail;
  for (const CoverageCell& c : cells_) n += c.outcome == Outcome::kFail;
  return n;
}

void Report::PrintHuman(std::FILE* out, bool verbose) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::fprintf(out, "Plexus plugin conformance report\n");
  for (const auto& [key, value] : info_) {
    std::fprintf(out, "  %-10s %s\n", (key + ":").c_str(), value.c_str());
  }
  std::string section;
  int passed = 0, failed = 0, skipped = 0;
  for (const CheckResult& c : Ordered(checks_)) {
    if (c.section != section) {
      section = c.section;
      std::fprintf(out, "\n%s\n", section.c_str());
    }
    const char* mark = c.outcome == Outcome::kPass ? "pass" : c.outcome == Outcome::kFail ? "FAIL" : "skip";
    std::fprintf(out, "  %s  %-28s %s\n", mark, c.name.c_str(), c.detail.c_str());
    passed += c.outcome == Outcome::kPass;
    failed += c.outcome == Outcome::kFail;
    skipped += c.outcome == Outcome::kSkip;
  }

  // The coverage table: ops down, dtypes across.
  int cells_passed = 0, cells_failed = 0, cells_skipped = 0;
  if (!cells_.empty()) {
    std::set<std::string> dtype_set;
    std::vector<std::string> ops;
    std::map<std::pair<std::string, std::string>, const CoverageCell*> by_key;
    for (const CoverageCell& c : cells_) {
      dtype_set.insert(c.dtype);
      if (std::find(ops.begin(), ops.end(), c.op) == ops.end()) ops.push_back(c.op);
      by_key[{c.op, c.dtype}] = &c;
      cells_passed += c.outcome == Outcome::kPass;
      cells_failed += c.outcome == Outcome::kFail;
      cells_skipped += c.outcome == Outcome::kSkip;
    }
    std::vector<std::string> dtypes(dtype_set.begin(), dtype_set.end());
    std::sort(dtypes.begin(), dtypes.end(),
              [](const std::string& a, const std::string& b) { return DtypeRank(a) < DtypeRank(b); });
    size_t op_width = 4;
    for (const std::string& op : ops) op_width = std::max(op_width, op.size());
    std::fprintf(out,
                 "\nkernel coverage (op x dtype; ok = every case passed on the plugin as on the "
                 "reference kernels, FAIL, skip = see below, blank = not registered)\n");
    std::fprintf(out, "  %-*s", static_cast<int>(op_width), "op");
    for (const std::string& d : dtypes) std::fprintf(out, " %-8s", d.c_str());
    std::fprintf(out, "\n");
    for (const std::string& op : ops) {
      std::fprintf(out, "  %-*s", static_cast<int>(op_width), op.c_str());
      for (const std::string& d : dtypes) {
        auto it = by_key.find({op, d});
        std::string text;
        if (it != by_key.end()) {
          const CoverageCell& c = *it->second;
          text = c.outcome == Outcome::kPass ? absl::StrCat("ok ", c.cases_passed)
                 : c.outcome == Outcome::kFail ? "FAIL" : "skip";
        }
        std::fprintf(out, " %-8s", text.c_str());
      }
      std::fprintf(out, "\n");
    }
    bool header = false;
    for (const CoverageCell& c : cells_) {
      if (c.outcome == Outcome::kPass && !verbose) continue;
      if (!header) {
        std::fprintf(out, "\nkernel details\n");
        header = true;
      }
      std::fprintf(out, "  %s  %s %s (%d/%d cases): %s\n", c.outcome == Outcome::kFail ? "FAIL" : OutcomeName(c.outcome),
                   c.op.c_str(), c.dtype.c_str(), c.cases_passed, c.cases_run, c.detail.c_str());
    }
  }
  std::fprintf(out, "\nsummary: checks %d passed, %d failed, %d skipped", passed, failed, skipped);
  if (!cells_.empty()) {
    std::fprintf(out, "; kernel cells %d passed, %d failed, %d skipped", cells_passed, cells_failed,
                 cells_skipped);
  }
  std::fprintf(out, "\nresult: %s\n", failed + cells_failed == 0 ? "PASS" : "FAIL");
}

std::string Report::Json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "{\n  \"tool\": \"plexus-plugin-check\",\n  \"info\": {";
  for (size_t i = 0; i < info_.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", JsonString(info_[i].first), ": ", JsonString(info_[i].second));
  }
  out += "},\n  \"checks\": [";
  int failed = 0;
  std::vector<CheckResult> checks = Ordered(checks_);
  for (size_t i = 0; i < checks.size(); ++i) {
    const CheckResult& c = checks[i];
    failed += c.outcome == Outcome::kFail;
    absl::StrAppend(&out, i ? "," : "", "\n    {\"section\": ", JsonString(c.section),
                    ", \"name\": ", JsonString(c.name), ", \"result\": ",
                    JsonString(OutcomeName(c.outcome)), ", \"detail\": ", JsonString(c.detail), "}");
  }
  out += "\n  ],\n  \"kernels\": [";
  for (size_t i = 0; i < cells_.size(); ++i) {
    const CoverageCell& c = cells_[i];
    failed += c.outcome == Outcome::kFail;
    absl::StrAppend(&out, i ? "," : "", "\n    {\"op\": ", JsonString(c.op), ", \"dtype\": ",
                    JsonString(c.dtype), ", \"result\": ", JsonString(OutcomeName(c.outcome)),
                    ", \"cases_run\": ", c.cases_run, ", \"cases_passed\": ", c.cases_passed,
                    ", \"detail\": ", JsonString(c.detail), "}");
  }
  absl::StrAppend(&out, "\n  ],\n  \"failures\": ", failed, ",\n  \"result\": ",
                  JsonString(failed == 0 ? "pass" : "fail"), "\n}\n");
  return out;
}

}  // namespace plexus::conformance
