// The progress line of long checks: progress.hpp.
#include "progress.hpp"

#include <cmath>
#include <cstring>

namespace tileverify::cli {

namespace {

std::string seconds_text(double s) {
  char buf[64];
  if (s < 100) {
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  } else if (s < 6000) {
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

}  // namespace

std::string progress_text(const char* verb, const char* unit, std::uint64_t done, std::uint64_t total, double spent,
                          double left) {
  constexpr int kBar = 20;
  const double part = total ? double(std::min(done, total)) / double(total) : 1.0;
  const int filled = int(std::floor(part * kBar));
  std::string s = std::string(verb) + " " + std::to_string(done) + " of " + std::to_string(total) + " " + unit + " [";
  s.append(std::size_t(filled), '#');
  s.append(std::size_t(kBar - filled), '.');
  s += "] " + seconds_text(spent);
  if (done < total && left >= 0 && std::isfinite(left)) s += ", about " + seconds_text(left) + " left";
  return s;
}

void Progress::update(const char* verb, const char* unit, std::uint64_t done, std::uint64_t total) {
  const Clock::time_point now = Clock::now();
  // A new count (another stage, or the grid of the other kernel) starts its
  // own rate.
  if (unit_ == nullptr || std::strcmp(unit, unit_) != 0 || total != total_ || done < first_done_) {
    unit_ = unit;
    total_ = total;
    first_done_ = done;
    first_at_ = now;
  }
  if (done < total && now - last_ < every_) return;
  if (done >= total && !printed_) return;  // a check too short to need a line
  last_ = now;
  double left = -1;
  const double measured = std::chrono::duration<double>(now - first_at_).count();
  if (done > first_done_ && measured >= 1)
    left = measured / double(done - first_done_) * double(total - std::min(done, total));
  const std::string text =
      progress_text(verb, unit, done, total, std::chrono::duration<double>(now - start_).count(), left);
  // On a terminal the line is padded, so that a shorter one covers the last.
  std::fprintf(out_, terminal_ ? "\rtileverify: %-78s" : "tileverify: %s\n", text.c_str());
  std::fflush(out_);
  printed_ = true;
  open_ = terminal_;
  if (done >= total) end_line();
}

void Progress::end_line() {
  if (!open_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  open_ = false;
}

}  // namespace tileverify::cli
