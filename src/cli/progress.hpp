// The progress line of long checks (docs/cli.md, "Progress"): what has run
// of how much, a bar, the time spent and the time left at the rate so far.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tileverify::cli {

// The text of one progress line: "ran 120 of 1024 CTAs [##........] 12 s,
// about 90 s left". `left` is negative while no rate is known yet.
std::string progress_text(const char* verb, const char* unit, std::uint64_t done, std::uint64_t total, double spent,
                          double left);

// Writes progress lines to a stream, at most one every `every` (the last one,
// done == total, always if any was written): on a terminal each rewrites the
// one before (carriage return), in a log each is a line. The rate counts from
// the first update, so that reading the spec and setting up do not make the
// first estimates too long.
class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  Progress(Clock::time_point start, std::FILE* out, bool terminal,
           Clock::duration every = std::chrono::seconds(2))
      : start_(start), last_(start), out_(out), terminal_(terminal), every_(every) {}
  ~Progress() { end_line(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(const char* verb, const char* unit, std::uint64_t done, std::uint64_t total);
  // Ends a line a terminal left open, before other output.
  void end_line();

 private:
  Clock::time_point start_, last_;
  std::FILE* out_;
  bool terminal_;
  Clock::duration every_;
  bool open_ = false;     // a terminal line without its newline yet
  bool printed_ = false;  // any line written
  // The first update of the current count, from which the rate is measured.
  const char* unit_ = nullptr;
  std::uint64_t total_ = 0, first_done_ = 0;
  Clock::time_point first_at_{};
};

}  // namespace tileverify::cli
