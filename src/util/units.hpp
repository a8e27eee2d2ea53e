// Sizes for people, shared by the library's reports and the command line.
#pragma once

#include <cstdint>
#include <string>

namespace tileverify::util {

// Bytes in binary units, to three significant digits: "512 bytes", "39.1 KiB",
// "1.5 GiB", "12 GiB", "119 GiB"; a saturated UINT64_MAX is "more than 16 EiB".
std::string size_text(std::uint64_t bytes);

}  // namespace tileverify::util
