// The progress line (src/cli/progress.hpp): the bar, the time left at the
// rate measured from the first update, and when lines are written.
#include "../../src/cli/progress.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

using tileverify::cli::Progress;
using tileverify::cli::progress_text;

namespace {

// What a Progress wrote to its stream.
std::string written(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[256];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) s.append(buf, n);
  return s;
}

}  // namespace

TEST_CASE("progress: the line has the count, a bar of the share done, and the time left when a rate is known") {
  CHECK(progress_text("ran", "CTAs", 256, 1024, 12, 36) == "ran 256 of 1024 CTAs [#####...............] 12 s, about 36 s left");
  CHECK(progress_text("ran", "CTAs", 0, 1024, 3, -1) == "ran 0 of 1024 CTAs [....................] 3 s");
  CHECK(progress_text("decided", "outputs", 10, 10, 200, 0) == "decided 10 of 10 outputs [####################] 3 min");
  CHECK(progress_text("ran", "CTAs", 1, 3, 30000, 60000).find("about 16.7 h left") != std::string::npos);
}

TEST_CASE("progress: lines in a log, none for a short check, the rate from the first update") {
  using namespace std::chrono;
  SUBCASE("a check that ends before the first interval writes nothing") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
      Progress p(steady_clock::now(), f, false, seconds(60));
      p.update("ran", "CTAs", 1, 4);
      p.update("ran", "CTAs", 4, 4);
    }
    CHECK(written(f).empty());
    std::fclose(f);
  }
  SUBCASE("every update past the interval is a line; the last one always once any was") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
      Progress p(steady_clock::now() - seconds(5), f, false, milliseconds(0));
      p.update("ran", "CTAs", 0, 4);
      p.update("ran", "CTAs", 2, 4);
      p.update("ran", "CTAs", 4, 4);
    }
    const std::string s = written(f);
    CHECK(s.find("tileverify: ran 0 of 4 CTAs") != std::string::npos);
    CHECK(s.find("tileverify: ran 4 of 4 CTAs [####################] 5 s\n") != std::string::npos);
    // Less than a second since the first update: no rate yet, so no estimate
    // (the 5 s before it were set-up, not CTAs).
    CHECK(s.find("left") == std::string::npos);
    std::fclose(f);
  }
  SUBCASE("on a terminal the line is rewritten and ended before anything else") {
    std::FILE* f = std::tmpfile();
    REQUIRE(f);
    {
      Progress p(steady_clock::now(), f, true, milliseconds(0));
      p.update("decided", "outputs", 1, 3);
      p.end_line();
      p.end_line();  // once
    }
    const std::string s = written(f);
    CHECK(s.rfind("\rtileverify: decided 1 of 3 outputs", 0) == 0);
    CHECK(s.back() == '\n');
    CHECK(s.find("\n") == s.size() - 1);
    std::fclose(f);
  }
}
