// Sizes for people, shared by the library's reports and the command line.
#pragma once

#include <cstdint>
#include <string>

namespace tileverify::util {

// Bytes in binary units: "512 bytes", "1.5 GiB", "12 GiB".
std::string size_text(std::uint64_t bytes);

}  // namespace tileverify::util
