// Sizes for people (units.hpp).
#include "units.hpp"

#include <cstdint>
#include <cstdio>

namespace tileverify::util {

std::string size_text(std::uint64_t bytes) {
  // A size computed with saturating arithmetic (the memory budget's
  // element counts times their size) is UINT64_MAX when it overflowed.
  if (bytes == UINT64_MAX) return "more than 16 EiB";
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  // Three significant digits: a budget of 11.8 GiB and a need of 12.3 GiB
  // stay distinguishable, and a whole number shows without ".0".
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (v >= 100) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

}  // namespace tileverify::util
